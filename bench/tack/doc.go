// Command tack is the Tack driver of the peer benchmark harness: it runs
// one scenario through Tack's public API (Runtime, Session, Subscription)
// on scripted models, or on a local OpenAI-compatible server, and prints one JSON line per measurement. bench/run
// starts it; see docs/benchmarks.md for what each scenario measures.
//
// # Usage
//
//	tack -scenario=turns -runs=200 -warmup=50 -cores=1
//	tack -scenario=http-turns -base-url=http://127.0.0.1:8080/v1 -runs=200 -warmup=50
//	tack -scenario=abort -sessions=1000 -rounds=1 -tool=stubborn -tool-ms=500
//	tack -scenario=steer -steers=10 -tool-ms=500
//	tack -scenario=idle -agents=100000
//	tack -scenario=throughput -chunks=200000 -subscribers=10
//	tack -scenario=turns-1000 -sessions=1000 -turns=5 -warmup=1
//	tack -scenario=serve-sse -serve=bin/tack-serve -sessions=100 -subscribers=1000 -chunks=200 -abort-sessions=1000 -chunk-ms=20
//
// The models are llm/script scripts resolved under names of their own
// ("bench:<scenario>"), so that the sessions of a scenario share one parsed
// script, as the peers' sessions share theirs. Every turn states its usage,
// so no runtime pays for estimating it.
//
// The http-turns scenario resolves its model from a configuration
// (package config) naming the server of bench/cmd/openaisrv as provider
// "bench", so that requests go through llm/openai and openai-go as a
// user's tack.json would have them.
//
// The serve-sse scenario is not the library but the server: it starts the
// tack command given by -serve as `tack serve` (a process of its own, with
// the memory store or SQLite, and a static token) and is its HTTP clients, reading
// event streams with bench/internal/sse.
package main
