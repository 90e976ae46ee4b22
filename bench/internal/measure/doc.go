// Package measure is what the Go drivers of the peer benchmark harness
// share: the scenario parameters they read from flags, the JSON lines they
// print, and the process figures they sample (CPU time, live heap, RSS).
//
// # Usage
//
// A driver parses Params, prints a Meta line, then one Record per
// measurement:
//
//	p := measure.Flags(flag.CommandLine)
//	flag.Parse()
//	out := measure.NewOutput("tack", p)
//	out.Meta(version)
//	out.Value("turns", "", "cpu_per_turn", "ns", v)
//	out.Samples("abort", "sessions=100 tool=none", "abort_seen", "us", latencies)
//
// The Node driver (bench/pi) prints the same lines; bench/cmd/report reads
// them all.
//
// # Concurrency
//
// An Output may be used from several goroutines; each line is written
// whole.
package measure
