package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/tack-run/tack/bench/internal/measure"
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
	case "turns":
		if *agent == "react" {
			reactTurns(p, out)
		} else {
			turns(p, out)
		}
	case "abort":
		abort(p, out)
	case "steer":
		out.Unsupported("steer", "", "Eino has no steering: nothing queues a message into a running agent, and nothing cancels one tool call without cancelling the run")
	case "idle":
		idle(p, out)
	case "throughput":
		throughput(p, out)
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
	ctx := context.Background()
	a, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name:          "bench",
		Description:   "a scripted agent",
		Model:         newScripted(turns),
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
// carried.
func drain(iter *adk.AsyncIterator[*adk.AgentEvent]) (tools int, first error) {
	for {
		ev, ok := iter.Next()
		if !ok {
			return tools, first
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.Role == schema.Tool {
			tools++
		}
		if err := eventErr(ev); err != nil && first == nil {
			first = err
		}
	}
}

// eventErr reads ev's message stream, if any, to its end and returns the
// error ev or its stream carried.
func eventErr(ev *adk.AgentEvent) error {
	if ev.Err != nil {
		return ev.Err
	}
	if ev.Output == nil || ev.Output.MessageOutput == nil || !ev.Output.MessageOutput.IsStreaming {
		return nil
	}
	s := ev.Output.MessageOutput.MessageStream
	defer s.Close()
	for {
		_, err := s.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
