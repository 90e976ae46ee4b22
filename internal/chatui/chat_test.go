package chatui

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/internal/eventually"
)

// lineTerm feeds lines to a Chat, one at a time: the next once the
// previous one's output is in (each test line prints something), then
// io.EOF.
type lineTerm struct {
	lines []string
	next  chan struct{}
	mu    sync.Mutex
	out   strings.Builder
}

func (l *lineTerm) ReadLine() (string, error) {
	if len(l.lines) == 0 {
		return "", io.EOF
	}
	<-l.next
	line := l.lines[0]
	l.lines = l.lines[1:]
	return line, nil
}

func (l *lineTerm) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.out.Write(p)
	return len(p), nil
}

func (l *lineTerm) SetPrompt(string) {}

func (l *lineTerm) output() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.out.String()
}

// TestChatControlCommands: the slash commands of conversation control
// reach the session, and a bad argument is told, not fatal.
func TestChatControlCommands(t *testing.T) {
	rt, err := tack.New()
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	s, err := rt.Spawn(tack.SessionConfig{ID: "c", Script: json.RawMessage(`{"turns":[{"text":"hi"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	term := &lineTerm{next: make(chan struct{}, 1),
		lines: []string{"/fork 0", "/fork two", "/abort later", "/abort after_tools", "/help"}}
	ui := &Chat{Session: s, Term: term}
	done := make(chan error, 1)
	go func() { done <- ui.Run(ctx, sub.C) }()
	wants := []string{
		"forked as s-1: tack chat --session s-1 goes on there\n",
		`/fork takes the number of messages to keep, not "two"`,
		`at is now, after_response or after_tools, not "later"`,
		"aborted", // agent_abort, told while idle
		"/rollback [TEXT]",
	}
	for _, want := range wants {
		term.next <- struct{}{}
		eventually.Within(t, 10*time.Second, func() error {
			if out := term.output(); !strings.Contains(out, want) {
				return fmt.Errorf("the chat never printed %q; it printed %q", want, out)
			}
			return nil
		})
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Session("s-1"); err != nil {
		t.Errorf("the fork: %v", err)
	}
}
