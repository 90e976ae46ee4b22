package script

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/llmtest"
)

func TestStream(t *testing.T) {
	history := &llm.Request{
		System: "sys!", // 4 bytes
		Messages: []*llm.Message{
			llm.UserMessage("12345678"),               // 8
			withCalls(1, 3),                           // 3 × `{"a":1}` = 21
			llm.ToolResultMessage("c-1", "ok", false), // 2
			llm.ToolResultMessage("c-2", "ok", false), // 2
			llm.ToolResultMessage("c-3", "ok", false), // 2
		},
	} // 39 bytes: 10 tokens
	tests := []struct {
		name  string
		turn  string
		req   *llm.Request
		steps []string
		resp  string
		err   *llm.Error
		took  time.Duration
	}{
		{
			name: "delay then chunks every chunk_delay_ms then tool call",
			turn: `{"delay_ms": 300, "text": "Let me look at the project.", "chunk_size": 4, "chunk_delay_ms": 30,
				"tool_calls": [{"name": "shell", "args": {"command": "ls -1 | head -5"}}],
				"usage": {"input_tokens": 120, "output_tokens": 12}}`,
			steps: []string{
				`300ms text "Let "`, `330ms text "me l"`, `360ms text "ook "`, `390ms text "at t"`,
				`420ms text "he p"`, `450ms text "roje"`, `480ms text "ct."`,
				`480ms tool c-1 shell {"command":"ls -1 | head -5"}`,
			},
			resp: `tool_calls "Let me look at the project." usage 120+12=132`,
			took: 480 * time.Millisecond,
		},
		{
			name:  "chunks and usage count runes not bytes",
			turn:  `{"text": "héllo wörld ✓", "chunk_size": 3}`,
			steps: []string{`0s text "hél"`, `0s text "lo "`, `0s text "wör"`, `0s text "ld "`, `0s text "✓"`},
			resp:  `end_turn "héllo wörld ✓" usage 0+4=4`,
		},
		{
			name:  "no chunk_size sends the whole text",
			turn:  `{"text": "hello", "chunk_delay_ms": 100}`,
			steps: []string{`0s text "hello"`},
			resp:  `end_turn "hello" usage 0+2=2`,
		},
		{
			name: "thinking streams before the text",
			turn: `{"delay_ms": 10, "thinking": "abcdef", "text": "xyz", "chunk_size": 4, "chunk_delay_ms": 5}`,
			steps: []string{
				`10ms thinking_start`, `10ms thinking "abcd"`, `15ms thinking "ef"`, `20ms text "xyz"`,
			},
			resp: `end_turn "xyz" usage 0+3=3`,
			took: 20 * time.Millisecond,
		},
		{
			name: "empty turn",
			turn: `{}`,
			resp: `end_turn "" usage 0+0=0`,
		},
		{
			name:  "usage estimated from system, history and output",
			turn:  `{"text": "hi", "tool_calls": [{"name": "echo"}]}`, // 2 + len("{}") = 4 bytes: 1 token
			req:   history,
			steps: []string{`0s text "hi"`, `0s tool c-4 echo {}`},
			resp:  `tool_calls "hi" usage 10+1=11`,
		},
		{
			name:  "tool call ids continue after the history's",
			turn:  `{"tool_calls": [{"name": "sleep", "args": {"ms": 5}}, {"name": "echo", "args": {"text": "x"}}], "usage": {"input_tokens": 1, "output_tokens": 2}}`,
			req:   history,
			steps: []string{`0s tool c-4 sleep {"ms":5}`, `0s tool c-5 echo {"text":"x"}`},
			resp:  `tool_calls "" usage 1+2=3`,
		},
		{
			name: "error before any text",
			turn: `{"delay_ms": 50, "error": {"status": 429, "message": "rate limited"}}`,
			err:  &llm.Error{Status: 429, Message: "rate limited"},
			took: 50 * time.Millisecond,
		},
		{
			name:  "error after text is a mid-stream failure",
			turn:  `{"text": "partial", "chunk_size": 4, "chunk_delay_ms": 10, "error": {"status": 500}}`,
			steps: []string{`0s text "part"`, `10ms text "ial"`},
			err:   &llm.Error{Status: 500, Message: "Internal Server Error"},
			took:  10 * time.Millisecond,
		},
		{
			name: "transport failure",
			turn: `{"error": {"status": 0, "message": "connection reset"}}`,
			err:  &llm.Error{Message: "connection reset"},
		},
		{
			name:  "stall after the first chunk",
			turn:  `{"delay_ms": 100, "text": "abcdef", "chunk_size": 2, "chunk_delay_ms": 10, "stall_ms": 1000}`,
			steps: []string{`100ms text "ab"`, `1.11s text "cd"`, `1.12s text "ef"`},
			resp:  `end_turn "abcdef" usage 0+2=2`,
			took:  1120 * time.Millisecond,
		},
		{
			name: "stall alone",
			turn: `{"stall_ms": 20000}`,
			resp: `end_turn "" usage 0+0=0`,
			took: 20 * time.Second,
		},
		{
			name:  "stall without text comes before the tool calls",
			turn:  `{"delay_ms": 5, "stall_ms": 50, "tool_calls": [{"name": "echo"}]}`,
			steps: []string{`55ms tool c-1 echo {}`},
			resp:  `tool_calls "" usage 0+1=1`,
			took:  55 * time.Millisecond,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := New(mustParse(t, `{"turns": [`+tt.turn+`]}`))
				req := tt.req
				if req == nil {
					req = &llm.Request{}
				}
				o := stream(t.Context(), p, req)
				for _, problem := range llmtest.Check(o.chunks, o.resp, o.err) {
					t.Errorf("contract: %s", problem)
				}
				if !slices.Equal(o.steps, tt.steps) {
					t.Errorf("chunks:\n%s", diff(o.steps, tt.steps))
				}
				if o.took != tt.took {
					t.Errorf("took %v, want %v", o.took, tt.took)
				}
				if tt.err != nil {
					var got *llm.Error
					if !errors.As(o.err, &got) || *got != *tt.err || o.resp != nil {
						t.Fatalf("Stream = %v, %v; want error %#v", summary(o.resp), o.err, tt.err)
					}
					return
				}
				if o.err != nil {
					t.Fatalf("Stream: %v", o.err)
				}
				if got := summary(o.resp); got != tt.resp {
					t.Errorf("response %s\nwant     %s", got, tt.resp)
				}
			})
		})
	}
}

func TestStreamResponseMessage(t *testing.T) {
	p := New(mustParse(t, `{"turns": [{"thinking": "hm", "text": "Hi.", "tool_calls": [{"name": "echo", "args": {"text": "a"}}]}]}`))
	o := stream(t.Context(), p, &llm.Request{})
	m := o.resp.Message
	if o.err != nil || m.GetRole() != llm.RoleAssistant || m.GetContent() != "Hi." || m.GetThinking() != "hm" ||
		len(m.GetToolCalls()) != 1 || m.GetToolCalls()[0].GetId() != "c-1" {
		t.Fatalf("Stream = %v, %v", m, o.err)
	}
}

func TestStreamArgsAreNotShared(t *testing.T) {
	// Tool call arguments in a response must not alias the Script, which
	// other sessions' Providers play too.
	s := mustParse(t, `{"turns": [{"tool_calls": [{"name": "echo", "args": {"text": "a"}}]}]}`)
	o := stream(t.Context(), New(s), &llm.Request{})
	o.resp.Message.GetToolCalls()[0].GetArgs().GetJson()[0] = 'X'
	if string(s.Turns[0].ToolCalls[0].Args) != `{"text":"a"}` {
		t.Fatalf("script args changed to %s", s.Turns[0].ToolCalls[0].Args)
	}
}

// The position survives SaveState and LoadState, so a restored session
// goes on at the turn it had reached; a position past the end is the end.
func TestPositionSavedAndLoaded(t *testing.T) {
	s, err := Parse([]byte(`{"turns":[{"text":"one"},{"text":"two"},{"text":"three"}],"when_exhausted":"error"}`))
	if err != nil {
		t.Fatal(err)
	}
	first := New(s)
	if r, err := first.Stream(t.Context(), nil, func(llm.Chunk) {}); err != nil || r.Message.Content != "one" {
		t.Fatalf("first turn: %v, %v", r, err)
	}
	state := first.SaveState()
	if string(state) != `{"next":1}` {
		t.Fatalf("state %s", state)
	}
	second := New(s)
	if err := second.LoadState(state); err != nil {
		t.Fatal(err)
	}
	if r, err := second.Stream(t.Context(), nil, func(llm.Chunk) {}); err != nil || r.Message.Content != "two" {
		t.Fatalf("after LoadState: %v, %v", r, err)
	}
	end := New(s)
	if err := end.LoadState([]byte(`{"next":99}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := end.Stream(t.Context(), nil, func(llm.Chunk) {}); err == nil {
		t.Fatal("a position past the end should be exhausted")
	}
	for _, bad := range []string{`{"next":-1}`, `not json`} {
		if err := New(s).LoadState([]byte(bad)); err == nil {
			t.Errorf("LoadState(%s) = nil", bad)
		}
	}
}
