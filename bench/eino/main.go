package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"time"

	"github.com/cloudwego/eino-ext/components/model/openai"
	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/tack-run/tack/bench/internal/measure"
	"github.com/tack-run/tack/bench/internal/openaisrv"
)

func main() {
	p := measure.Flags(flag.CommandLine)
	agent := flag.String("agent", "adk", "turns: adk (ChatModelAgent and Runner) or react (flow/agent/react)")
	flag.Parse()
	name := "eino"
	if *agent == "react" {
		name = "eino-react"
	}
	out := measure.NewOutput(name, p)
	version := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/cloudwego/eino" {
				version = d.Version
			}
		}
	}
	out.Meta(version)
	defer measure.Profile(p)()
	switch p.Scenario {
	case "http-turns":
		httpTurns(p, out)
	case "turns":
		if *agent == "react" {
			reactTurns(p, out)
		} else {
			turns(p, out)
		}
	case "turns-1000":
		turns1000(p, out)
	case "abort":
		abort(p, out)
	case "steer":
		out.Unsupported("steer", "", "Eino has no steering: nothing queues a message into a running agent, and nothing cancels one tool call without cancelling the run")
	case "idle":
		idle(p, out)
	case "throughput":
		throughput(p, out)
	case "serve-sse":
		out.Unsupported("serve-sse", "", "Eino has no server: `tack serve` is measured alone, against the protocol's 100 ms abort bound")
	default:
		measure.Fatal("unknown scenario %q", p.Scenario)
	}
}

type textArgs struct {
	Text string `json:"text" jsonschema:"description=The text to return."`
}

type sleepArgs struct {
	MS int `json:"ms" jsonschema:"description=How long to wait, in milliseconds."`
}

func mustTool(t tool.InvokableTool, err error) tool.BaseTool {
	if err != nil {
		measure.Fatal("tool: %v", err)
	}
	return t
}

// echoTool returns its text, like Tack's echo.
func echoTool() tool.BaseTool {
	return mustTool(utils.InferTool("echo", "Return the given text unchanged.",
		func(_ context.Context, a textArgs) (string, error) { return a.Text, nil }))
}

// stubbornTool sleeps ignoring cancellation, like Tack's sleep_stubborn;
// started is told when it starts.
func stubbornTool(started func()) tool.BaseTool {
	return mustTool(utils.InferTool("sleep_stubborn", "Wait for the given number of milliseconds. It ignores cancellation.",
		func(_ context.Context, a sleepArgs) (string, error) {
			started()
			time.Sleep(time.Duration(a.MS) * time.Millisecond)
			return fmt.Sprintf("slept %d ms", a.MS), nil
		}))
}

// newRunner returns a streaming Runner of a ChatModelAgent playing turns
// with tools.
func newRunner(turns []turn, tools ...tool.BaseTool) *adk.Runner {
	return runnerOf(newScripted(turns), tools...)
}

// runnerOf returns a streaming Runner of a ChatModelAgent on m with tools.
func runnerOf(m model.ToolCallingChatModel, tools ...tool.BaseTool) *adk.Runner {
	ctx := context.Background()
	a, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name:          "bench",
		Description:   "a bench agent",
		Model:         m,
		ToolsConfig:   adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: tools}},
		MaxIterations: 100,
	})
	if err != nil {
		measure.Fatal("agent: %v", err)
	}
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: a, EnableStreaming: true})
}

// drain reads a run's events, every message stream to its end; it returns
// the number of tool results and the first error an event or a stream
// carried. seen, when set, is given every assistant message and every chunk
// of an assistant stream.
func drain(iter *adk.AsyncIterator[*adk.AgentEvent], seen func(*schema.Message)) (tools int, first error) {
	for {
		ev, ok := iter.Next()
		if !ok {
			return tools, first
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.Role == schema.Tool {
			tools++
		}
		if err := eventErr(ev, seen); err != nil && first == nil {
			first = err
		}
	}
}

// eventErr reads ev's message stream, if any, to its end and returns the
// error ev or its stream carried; seen, when set, is given the assistant
// message or each chunk of its stream.
func eventErr(ev *adk.AgentEvent, seen func(*schema.Message)) error {
	if ev.Err != nil {
		return ev.Err
	}
	if ev.Output == nil || ev.Output.MessageOutput == nil {
		return nil
	}
	mo := ev.Output.MessageOutput
	if mo.Role != schema.Assistant {
		seen = nil
	}
	if !mo.IsStreaming {
		if seen != nil && mo.Message != nil {
			seen(mo.Message)
		}
		return nil
	}
	s := mo.MessageStream
	defer s.Close()
	for {
		m, err := s.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if seen != nil {
			seen(m)
		}
	}
}

// httpTurns times runs of one turn each — Query, one reply streamed by the
// OpenAI-compatible server at p.BaseURL through eino-ext's OpenAI chat
// model, the end of the event iterator — one fresh agent and runner each
// (made before the clock starts), all on one ChatModel, which holds no
// per-request state. Each run must yield the server's reply and usage,
// which the reader collects from the chunks of the assistant stream.
func httpTurns(p *measure.Params, out *measure.Output) {
	if p.BaseURL == "" {
		measure.Fatal("http-turns needs --base-url")
	}
	ctx := context.Background()
	cm, err := openai.NewChatModel(ctx, &openai.ChatModelConfig{APIKey: "bench", BaseURL: p.BaseURL, Model: "bench"})
	if err != nil {
		measure.Fatal("chat model: %v", err)
	}
	batch := func(n int) (cpu, wall time.Duration) {
		runners := make([]*adk.Runner, n)
		for i := range runners {
			runners[i] = runnerOf(cm)
		}
		cpu0, t0 := measure.CPUTime(), time.Now()
		for _, r := range runners {
			var text strings.Builder
			var u *schema.TokenUsage
			_, err := drain(r.Query(ctx, "go"), func(m *schema.Message) {
				text.WriteString(m.Content)
				if m.ResponseMeta != nil && m.ResponseMeta.Usage != nil {
					u = m.ResponseMeta.Usage
				}
			})
			if err != nil || text.String() != openaisrv.Reply || u == nil || u.PromptTokens != openaisrv.Usage.PromptTokens || u.CompletionTokens != openaisrv.Usage.CompletionTokens {
				measure.Fatal("reply %q with usage %+v, error %v; want %q and the server's usage", text.String(), u, err, openaisrv.Reply)
			}
		}
		return measure.CPUTime() - cpu0, time.Since(t0)
	}
	measure.TimeTurns(p, out, "http-turns", 1, batch)
}
