package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/timeline"
)

// demo plays the built-in script: a prompt, streaming text, a tool call, a
// queued prompt, a steer that cancels a running tool, and an abort during
// streaming — every step printed with the state the session is in.
func demo(args []string) error {
	var c common
	fs := flag.NewFlagSet("tack demo", flag.ContinueOnError)
	c.register(fs, "memory", false)
	if err := fs.Parse(args); err != nil {
		return err
	}
	rt, closeRuntime, err := c.runtime()
	if err != nil {
		return err
	}
	defer closeRuntime()
	start := time.Now()
	s, err := rt.Spawn(tack.SessionConfig{ID: "demo", Model: "script:demo", System: "You are a helpful assistant."})
	if err != nil {
		return err
	}
	ctx := context.Background()
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{})
	if err != nil {
		return err
	}
	p := timeline.New(os.Stdout, timeline.ColorFor(os.Stdout), start)
	d := &driver{s: s, p: p}
	d.act("prompt", "What is in this project?", func() error { _, err := s.Prompt(ctx, "What is in this project?"); return err })
	for ev := range sub.C {
		p.Event(ev)
		if done, err := d.react(ctx, ev); done || err != nil {
			p.Close()
			if err != nil {
				return err
			}
			return d.summary(ctx)
		}
	}
	return fmt.Errorf("the session ended unexpectedly")
}

// driver plays the user's part of the demo, reacting to events.
type driver struct {
	s      *tack.Session
	p      *timeline.Printer
	deltas int
	queued bool
	steers bool
	runs   int
}

func (d *driver) act(what, text string, f func() error) {
	if text == "" {
		d.p.Action("%s", what)
	} else {
		d.p.Action("%s %q", what, text)
	}
	if err := f(); err != nil {
		d.p.Action("%s failed: %v", what, err)
	}
}

// react sends the next user command when its moment comes; it reports
// done after the second run.
func (d *driver) react(ctx context.Context, ev *eventsv1.Event) (bool, error) {
	switch e := ev.Payload.(type) {
	case *eventsv1.Event_MessageDelta:
		d.deltas++
		if d.runs == 0 && !d.queued {
			d.queued = true
			const text = "Then wait for the build to finish."
			d.act("prompt while streaming", text, func() error { _, err := d.s.Prompt(ctx, text); return err })
		}
		if d.runs == 1 && d.deltas == 12 {
			d.act("abort while streaming", "", func() error { return d.s.Abort(ctx, tack.AbortOptions{}) })
		}
	case *eventsv1.Event_ToolExecutionStart:
		if e.ToolExecutionStart.Name == "sleep" && !d.steers {
			d.steers = true
			const text = "Don't wait for the build, stop that."
			d.act("steer while a tool runs", text, func() error { _, err := d.s.Steer(ctx, text, tack.SteerOptions{}); return err })
		}
	case *eventsv1.Event_AgentEnd:
		d.runs++
		d.deltas = 0
		if d.runs == 2 {
			return true, nil
		}
		const text = "Tell me a long story."
		d.act("prompt", text, func() error { _, err := d.s.Prompt(ctx, text); return err })
	}
	return false, nil
}

// summary prints the committed history and the session's state.
func (d *driver) summary(ctx context.Context) error {
	msgs, err := d.s.Messages(ctx)
	if err != nil {
		return err
	}
	st, err := d.s.State(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("\nhistory (%d messages, valid for the provider):\n", len(msgs))
	for i, m := range msgs {
		text := m.Content
		if len(text) > 70 {
			text = text[:67] + "..."
		}
		if len(m.ToolCalls) > 0 {
			text += fmt.Sprintf(" [calls %s]", m.ToolCalls[0].Name)
		}
		fmt.Printf("  %2d %-9s %q\n", i, m.Role, text)
	}
	fmt.Printf("\nstate %s · %d tokens · context %.1f%%\n", st.State, st.Usage.GetTotalTokens(), st.GetContext().GetPercent())
	return nil
}
