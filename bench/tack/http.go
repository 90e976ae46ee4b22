package main

import (
	"fmt"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/config"
	eventsv1 "github.com/tack-run/tack/events/v1"

	"github.com/tack-run/tack/bench/internal/measure"
	"github.com/tack-run/tack/bench/internal/openaisrv"
)

// httpTurns times runs of one turn each — the prompt, one reply streamed
// by the OpenAI-compatible server at p.BaseURL, agent_end — one fresh
// session each (spawned and subscribed before the clock starts). The model
// comes from a configuration naming the server as a provider, as a user's
// tack.json would, so the request goes through llm/openai and openai-go.
// Each run must end completed with the server's reply and usage.
func httpTurns(p *measure.Params, out *measure.Output) {
	if p.BaseURL == "" {
		measure.Fatal("http-turns needs --base-url")
	}
	cfg, err := config.Parse(fmt.Appendf(nil, `{"providers": {"bench": {"base_url": %q, "models": ["bench"]}}}`, p.BaseURL))
	if err != nil {
		measure.Fatal("config: %v", err)
	}
	rt, err := tack.New(tack.WithModels(config.NewResolver(cfg)))
	if err != nil {
		measure.Fatal("%v", err)
	}
	defer rt.Close()
	batch := func(n int) (cpu, wall time.Duration) {
		sessions := make([]*tack.Session, n)
		subs := make([]*tack.Subscription, n)
		for i := range n {
			sessions[i] = spawn(rt, "bench/bench")
			subs[i] = subscribe(sessions[i], 0)
		}
		cpu0, t0 := measure.CPUTime(), time.Now()
		for i := range n {
			prompt(sessions[i], "go")
			var reply *eventsv1.ResponseComplete
			end := until(subs[i].C, func(ev *eventsv1.Event) bool {
				if rc := ev.GetResponseComplete(); rc != nil {
					reply = rc
				}
				return ev.GetAgentEnd() != nil
			})
			if r := end.GetAgentEnd().GetReason(); r != "completed" || reply == nil {
				measure.Fatal("run ended %s, response %v", r, reply)
			}
			u := reply.GetUsage()
			if text := reply.GetMessage().GetContent(); text != openaisrv.Reply || u.GetInputTokens() != int64(openaisrv.Usage.PromptTokens) || u.GetOutputTokens() != int64(openaisrv.Usage.CompletionTokens) {
				measure.Fatal("reply %q with usage %v, want %q and the server's", text, u, openaisrv.Reply)
			}
		}
		wall, cpu = time.Since(t0), measure.CPUTime()-cpu0
		for _, s := range sessions {
			s.Close()
		}
		return cpu, wall
	}
	measure.TimeTurns(p, out, "http-turns", 1, batch)
}
