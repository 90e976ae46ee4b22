// Command report turns the JSON lines of the peer benchmark drivers into
// the "Against peer runtimes" section of docs/benchmarks.md: a table per
// scenario with each runtime's median and spread and the ratio Tack/peer
// (for serve-sse, Tack's alone, the abort latencies against the 100 ms
// bound instead), the machine, the versions, the date, and how each peer
// was driven.
//
// # Usage
//
//	report -results results/2026-01-01T00-00-00-quick -doc ../docs/benchmarks.md
//
// The results directory holds raw.jsonl (every driver's output) and
// params (KEY=VALUE lines: the mode, the sizes and the Tack commit
// bench/run used). Without
// -doc the section is printed to stdout. With -doc, the text between the
// markers <!-- bench/run:begin --> and <!-- bench/run:end --> is replaced
// and the rest of the file left alone; a file without the markers gets the
// section appended under "## Against peer runtimes", and a missing file is
// created with just that section.
//
// The prose around the tables is section.md.tmpl, a text/template.
package main
