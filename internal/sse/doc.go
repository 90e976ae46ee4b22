// Package sse writes Server-Sent Events (the text/event-stream format of
// the HTML standard) to an http.ResponseWriter: messages with id, event
// and data fields, and comments, buffered and flushed together.
//
// # Usage
//
//	w, err := sse.Start(rw, 30*time.Second)
//	w.Event("14", "message_delta", []byte(`{"delta":"hi"}`))
//	w.Comment("keepalive")
//	err = w.Flush()
//
// # Concurrency
//
// A Writer belongs to the handler goroutine that started it.
//
// # Testing
//
// The package's tests write to an httptest.ResponseRecorder and check the
// bytes; server/http's tests read real streams.
package sse
