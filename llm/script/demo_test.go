package script

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/llmtest"
)

func TestDemoScript(t *testing.T) {
	s := Demo()
	if len(s.Turns) != 5 || s.WhenExhausted != Echo || s.ContextWindow != 8000 {
		t.Fatalf("demo: %d turns, when_exhausted %q, window %d", len(s.Turns), s.WhenExhausted, s.ContextWindow)
	}
	tests := []struct {
		name string
		ok   bool
	}{
		{"turn 1 thinks, streams slowly and lists files", func() bool {
			t1 := s.Turns[0]
			return t1.Thinking != "" && t1.Text == "Let me look at the project." &&
				t1.ChunkSize == 4 && t1.ChunkDelayMS == 30 && t1.DelayMS == 300 &&
				len(t1.ToolCalls) == 1 && t1.ToolCalls[0].Name == "shell" &&
				string(t1.ToolCalls[0].Args) == `{"command":"ls -1 | head -5"}`
		}()},
		{"turn 2 summarises", strings.HasPrefix(s.Turns[1].Text, "Here is what I found:") && s.Turns[1].ChunkSize > 0},
		{"turn 3 sleeps 3 s", len(s.Turns[2].ToolCalls) == 1 && s.Turns[2].ToolCalls[0].Name == "sleep" &&
			string(s.Turns[2].ToolCalls[0].Args) == `{"ms":3000}`},
		{"turn 4 stops waiting", s.Turns[3].Text == "Stopped waiting as you asked." && len(s.Turns[3].ToolCalls) == 0},
		{"turn 5 is long and slow", func() bool {
			n := utf8.RuneCountInString(s.Turns[4].Text)
			return n >= 350 && n <= 450 && s.Turns[4].ChunkDelayMS == 40
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.ok {
				t.Fatal("demo script does not match")
			}
		})
	}
}

func TestDemoReturnsNewScripts(t *testing.T) {
	a, b := Demo(), Demo()
	a.Turns[0].Text = "changed"
	if b.Turns[0].Text != "Let me look at the project." {
		t.Fatal("Demo returns a shared Script")
	}
}

// TestDemoSession plays the whole demo as a session would, keeping the
// Provider contract at each turn and the history valid.
func TestDemoSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(Demo())
		req := &llm.Request{Messages: []*llm.Message{llm.UserMessage("What is in this project?")}}
		var ids []string
		var took []time.Duration
		for range 6 {
			start := time.Now()
			_, resp, err := llmtest.Collect(t, p, req)
			if err != nil {
				t.Fatal(err)
			}
			took = append(took, time.Since(start))
			req.Messages = append(req.Messages, resp.Message)
			for _, c := range resp.Message.GetToolCalls() {
				ids = append(ids, c.GetId())
				req.Messages = append(req.Messages, llm.ToolResultMessage(c.GetId(), "done", false))
			}
			if len(resp.Message.GetToolCalls()) == 0 {
				req.Messages = append(req.Messages, llm.UserMessage("next"))
			}
			if err := llm.Validate(req.Messages); err != nil {
				t.Fatal(err)
			}
		}
		if want := []string{"c-1", "c-2"}; !slices.Equal(ids, want) {
			t.Errorf("tool call ids %q, want %q", ids, want)
		}
		// Turn 1: 300 ms, then thinking and text chunks 30 ms apart.
		think := utf8.RuneCountInString(Demo().Turns[0].Thinking)
		chunks := (think+3)/4 + 7
		if want := 300*time.Millisecond + time.Duration(chunks-1)*30*time.Millisecond; took[0] != want {
			t.Errorf("turn 1 took %v, want %v", took[0], want)
		}
		if last := req.Messages[len(req.Messages)-2]; last.GetContent() != "next" {
			t.Errorf("after the script, echo answered %q, want %q", last.GetContent(), "next")
		}
	})
}
