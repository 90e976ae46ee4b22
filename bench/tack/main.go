package main

import (
	"context"
	"flag"
	"runtime/debug"
	"time"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"

	"github.com/tack-run/tack/bench/internal/measure"
)

func main() {
	p := measure.Flags(flag.CommandLine)
	flag.Parse()
	name := "tack"
	if p.Passivate {
		if p.Scenario != "idle" {
			measure.Fatal("--passivate is for the idle scenario")
		}
		name = "tack-passivated"
		if p.Store == "memory" {
			name = "tack-passivated-memory"
		}
	}
	out := measure.NewOutput(name, p)
	version := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/tack-run/tack" {
				version = d.Version
			}
		}
	}
	out.Meta(version)
	defer measure.Profile(p)()
	switch p.Scenario {
	case "turns":
		turns(p, out)
	case "http-turns":
		httpTurns(p, out)
	case "turns-1000":
		turns1000(p, out)
	case "serve-sse":
		serveSSE(p, out)
	case "abort":
		abort(p, out)
	case "steer":
		steer(p, out)
	case "idle":
		idle(p, out)
	case "throughput":
		throughput(p, out)
	default:
		measure.Fatal("unknown scenario %q", p.Scenario)
	}
}

func newRuntime(m *models, opts ...tack.Option) *tack.Runtime {
	rt, err := tack.New(append([]tack.Option{tack.WithModels(m)}, opts...)...)
	if err != nil {
		measure.Fatal("%v", err)
	}
	return rt
}

func spawn(rt *tack.Runtime, model string, tools ...string) *tack.Session {
	s, err := rt.Spawn(tack.SessionConfig{Model: model, Tools: tools})
	if err != nil {
		measure.Fatal("spawn: %v", err)
	}
	return s
}

func subscribe(s *tack.Session, buffer int) *tack.Subscription {
	sub, err := s.Subscribe(context.Background(), tack.SubscribeOptions{Buffer: buffer})
	if err != nil {
		measure.Fatal("subscribe: %v", err)
	}
	return sub
}

func prompt(s *tack.Session, text string) {
	if _, err := s.Prompt(context.Background(), text); err != nil {
		measure.Fatal("prompt: %v", err)
	}
}

// until reads c until match accepts an event, failing after
// measure.Deadline.
func until(c <-chan *eventsv1.Event, match func(*eventsv1.Event) bool) *eventsv1.Event {
	t := time.NewTimer(measure.Deadline)
	defer t.Stop()
	for {
		select {
		case ev, ok := <-c:
			if !ok {
				measure.Fatal("subscription closed")
			}
			if match(ev) {
				return ev
			}
		case <-t.C:
			measure.Fatal("timed out waiting for an event")
		}
	}
}
