// Command eino is the Eino driver of the peer benchmark harness: it runs
// one scenario through Eino's ADK (ChatModelAgent and a streaming Runner)
// on a scripted chat model (model.go) and prints one JSON line per
// measurement, in the format of bench/internal/measure. bench/run starts
// it; docs/benchmarks.md says how each scenario maps onto Eino.
//
// # Usage
//
//	eino -scenario=turns -runs=200 -warmup=50 -cores=1
//	eino -scenario=turns -agent=react -runs=200   # flow/agent/react instead
//	eino -scenario=http-turns -base-url=http://127.0.0.1:8080/v1 -runs=200 -warmup=50
//	eino -scenario=abort -sessions=1000 -rounds=1 -tool=stubborn -tool-ms=500
//	eino -scenario=idle -agents=100000
//	eino -scenario=throughput -chunks=200000 -subscribers=10
//	eino -scenario=turns-1000 -sessions=1000 -turns=5 -warmup=1
//
// The steer scenario prints an "unsupported" line: Eino has no steering;
// so does serve-sse: Eino has no server.
//
// The scripted model plays the turns of Tack's scripted model
// (docs/protocol.md#the-scripted-model) — delay, text in chunks at a pace, tool calls — on a goroutine of its
// own per request, and ends its stream with ctx.Err() as soon as the
// request's context is cancelled. The tools are made with utils.InferTool.
//
// The http-turns scenario uses no script: its agents stream from the local
// OpenAI-compatible server of bench/cmd/openaisrv through eino-ext's OpenAI
// chat model (github.com/cloudwego/eino-ext/components/model/openai),
// Eino's own component for such servers.
package main
