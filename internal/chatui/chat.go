package chatui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/internal/ansi"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// quitWindow is how soon a second Ctrl-C must follow the first to quit.
const quitWindow = 2 * time.Second

// Terminal is where the chat reads lines and writes output. x/term's
// Terminal fits: its Write redraws the prompt below the output.
type Terminal interface {
	ReadLine() (string, error)
	Write(p []byte) (int, error)
	SetPrompt(prompt string)
}

// Chat runs a conversation with one session for a person.
type Chat struct {
	Session *tack.Session
	Term    Terminal
	// Interrupts delivers Ctrl-C presses: the first aborts a run, a second
	// within two seconds quits.
	Interrupts <-chan struct{}
	Color      bool
	// LivePrompt is true when the terminal shows the prompt (and so the
	// status line) at all times; then streamed text is written in whole
	// lines of at most Width runes. Otherwise deltas are written as they
	// come and the status is printed after each run.
	LivePrompt bool
	Width      int
	Now        func() time.Time

	mu       sync.Mutex
	status   Status
	thinking bool // reasoning text is being streamed
	text     lineBuffer
}

// Run chats until the input ends, the person quits, or ctx is done.
func (c *Chat) Run(ctx context.Context, evs <-chan *eventsv1.Event) error {
	if c.Now == nil {
		c.Now = time.Now
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.setPrompt()
	go c.follow(evs)
	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		for {
			l, err := c.Term.ReadLine()
			if err != nil {
				readErr <- err
				return
			}
			select {
			case lines <- l:
			case <-ctx.Done():
				return
			}
		}
	}()
	var lastInterrupt time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-readErr:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case <-c.Interrupts:
			now := c.Now()
			if now.Sub(lastInterrupt) < quitWindow {
				return nil
			}
			lastInterrupt = now
			c.interrupt(ctx)
		case l := <-lines:
			if quit := c.handle(ctx, strings.TrimSpace(l)); quit {
				return nil
			}
		}
	}
}

// follow prints events and keeps the status line current.
func (c *Chat) follow(evs <-chan *eventsv1.Event) {
	for ev := range evs {
		c.mu.Lock()
		c.status.Update(ev)
		out := Describe(ev, c.Color)
		switch {
		case ev.GetThinkingDelta() != nil:
			c.thinking = true
		case ev.GetMessageDelta() != nil && c.thinking:
			c.thinking, out = false, "\n"+out
		}
		if c.LivePrompt {
			out = c.lines(ev, out)
		}
		if ev.GetAgentEnd() != nil && !c.LivePrompt {
			out += paint(c.Color, ansi.Dim, "— "+c.status.Render(false)+" —") + "\n"
		}
		c.mu.Unlock()
		c.setPrompt()
		c.print(out)
	}
}

// lines holds streamed text back until its lines are whole; any other
// output first ends the unfinished line.
func (c *Chat) lines(ev *eventsv1.Event, out string) string {
	c.text.width = c.Width - 1
	if ev.GetMessageDelta() != nil || ev.GetThinkingDelta() != nil || ev.GetThinkingStart() != nil {
		return c.text.add(out)
	}
	if out == "\n" { // the end of a response
		return c.text.flush()
	}
	if out == "" {
		return ""
	}
	return c.text.flush() + out
}

// interrupt aborts a run, or tells how to quit.
func (c *Chat) interrupt(ctx context.Context) {
	if st := c.snapshot(); st.Busy() {
		if err := c.Session.Abort(ctx, tack.AbortOptions{}); err != nil {
			c.printError(err)
		}
		return
	}
	c.print(paint(c.Color, ansi.Dim, "(press Ctrl-C again to quit)") + "\n")
}

// handle acts on one input line; it reports whether to quit.
func (c *Chat) handle(ctx context.Context, line string) bool {
	if line == "" {
		return false
	}
	st := c.snapshot()
	var err error
	switch {
	case strings.HasPrefix(line, "/"):
		return c.command(ctx, line)
	case st.Approval != nil && answersApproval(line):
		err = c.answerApproval(ctx, st.Approval.ApprovalId, line)
	case st.Question != nil:
		err = c.Session.Respond(ctx, st.Question.Ref, line)
	case st.Busy():
		_, err = c.Session.Steer(ctx, line, tack.SteerOptions{})
	default:
		_, err = c.Session.Prompt(ctx, line)
	}
	if err != nil {
		c.printError(err)
	}
	return false
}

// answersApproval reports whether a line answers a pending approval.
func answersApproval(line string) bool {
	switch strings.ToLower(strings.Fields(line)[0]) {
	case "y", "yes", "a", "always", "n", "no":
		return true
	}
	return false
}

func (c *Chat) answerApproval(ctx context.Context, id, line string) error {
	word, reason, _ := strings.Cut(line, " ")
	switch strings.ToLower(word) {
	case "y", "yes":
		return c.Session.Approve(ctx, id, false)
	case "a", "always":
		return c.Session.Approve(ctx, id, true)
	}
	if reason == "" {
		reason = "declined by the user"
	}
	return c.Session.Reject(ctx, id, reason)
}

// command runs a slash command; it reports whether to quit.
func (c *Chat) command(ctx context.Context, line string) bool {
	name, arg, _ := strings.Cut(line, " ")
	var err error
	switch name {
	case "/quit", "/exit":
		return true
	case "/abort":
		err = c.Session.Abort(ctx, tack.AbortOptions{At: events.At(strings.TrimSpace(arg))})
	case "/rollback":
		err = c.rollback(ctx, strings.TrimSpace(arg))
	case "/interrupt", "/queue":
		_, err = c.Session.Prompt(ctx, strings.TrimSpace(arg), tack.PromptOptions{IfBusy: events.IfBusy(name[1:])})
	case "/fork":
		err = c.fork(ctx, strings.TrimSpace(arg))
	case "/model":
		err = c.Session.SwitchModel(ctx, strings.TrimSpace(arg))
	case "/state":
		var st *eventsv1.SessionState
		if st, err = c.Session.State(ctx); err == nil {
			c.print(fmt.Sprintf("%s on %s · %d messages · queued %d prompts, %d steering\n",
				st.State, st.Model, st.MessageCount, len(st.PromptQueue), len(st.SteeringQueue)))
		}
	default:
		c.print(Help)
	}
	if err != nil {
		c.printError(err)
	}
	return false
}

// Help lists the slash commands a chat takes (`/help` prints it).
const Help = `commands:
  /abort [now|after_response|after_tools]  stop the run, now or at that point
  /rollback [TEXT]     stop the run and take its messages out; with TEXT, send it instead (edit and resend)
  /interrupt TEXT      stop the run, keep its messages, send TEXT as a new run
  /queue TEXT          send TEXT after the run instead of steering it
  /fork N              copy this session with its first N messages into a new one
  /model NAME, /state, /quit
Enter while busy steers; Ctrl-C aborts (twice quits)
`

// rollback takes the run's messages out: with text, by a prompt that
// replaces the run; without, by an abort.
func (c *Chat) rollback(ctx context.Context, text string) error {
	if text != "" {
		_, err := c.Session.Prompt(ctx, text, tack.PromptOptions{IfBusy: events.IfBusyRollback})
		return err
	}
	return c.Session.Abort(ctx, tack.AbortOptions{Rollback: true})
}

// fork copies the session's first n messages into a new session, which
// the person opens with tack chat --session.
func (c *Chat) fork(ctx context.Context, arg string) error {
	n, err := strconv.Atoi(arg)
	if err != nil {
		return fmt.Errorf("/fork takes the number of messages to keep, not %q", arg)
	}
	f, err := c.Session.Fork(ctx, n, "")
	if err != nil {
		return err
	}
	c.print(fmt.Sprintf("forked as %s: tack chat --session %s goes on there\n", f.ID(), f.ID()))
	return nil
}

func (c *Chat) snapshot() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

func (c *Chat) setPrompt() {
	st := c.snapshot()
	c.Term.SetPrompt(st.Render(c.Color) + " › ")
}

// printError prints err in red, its text made printable (ansi.Printable):
// it may quote what a server or a provider said.
func (c *Chat) printError(err error) {
	c.print(paint(c.Color, ansi.Red, ansi.Printable(err.Error())) + "\n")
}

func (c *Chat) print(s string) {
	if s != "" || c.LivePrompt {
		_, _ = c.Term.Write([]byte(s))
	}
}
