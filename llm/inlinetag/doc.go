// Package inlinetag takes the inline tags <title>…</title> and
// <status>…</status> out of a model's text as it streams, so that a
// session can report them as events (title_generated, status_update) and
// keep them out of the text it shows and commits.
//
// # Usage
//
// One Extractor per streamed response: Write each text chunk, Flush at
// the end, and handle the pieces in order — plain text (Tag "") and tags:
//
//	var x inlinetag.Extractor
//	for _, p := range x.Write(chunk) { ... }
//	for _, p := range x.Flush() { ... }
//
// Strip does the same for a whole text at once and returns its plain text.
//
// # What is a tag
//
// A tag is <title> or <status> (lower case, exactly), its content, and the
// matching closing tag, where the content is at most MaxContent bytes and
// is everything up to the first closing tag of that name. The piece
// carries the content trimmed of surrounding white space; an empty one
// gives no piece, but its tags are stripped all the same. One line break
// (\n) right after a closing tag is stripped with it. An opening tag whose
// closing tag does not follow within MaxContent bytes, or before the end
// of the text, is plain text, and what follows it is read again for tags.
//
// Chunks may split a tag anywhere: the Extractor holds back only text that
// starts with "<" and may still become a tag (a prefix of an opening tag,
// or an opening tag waiting for its closing one); all other text is
// returned by the Write that brought it. Pieces are the same whatever the
// chunking, up to how plain text is cut.
//
// # Concurrency
//
// An Extractor belongs to one goroutine; the zero value is ready to use.
//
// # Testing
//
// A table test covers the cases above, and a fuzz test checks that every
// way of cutting a text into two or three chunks gives the pieces of
// the whole text.
package inlinetag
