package agui

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// script builds a session's events with seq 1, 2, 3, ...
type script struct{ seq uint64 }

func (s *script) ev(p proto.Message) *eventsv1.Event {
	ev := events.New(p)
	s.seq++
	ev.Session, ev.Seq = "s1", s.seq
	return ev
}

func raw(s string) *eventsv1.RawJSON { return &eventsv1.RawJSON{Json: []byte(s)} }

func usage(in, out int64) *eventsv1.Usage {
	return &eventsv1.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}
}

// render writes AG-UI events one a line: CUSTOM as "CUSTOM <name>", the
// others as their JSON.
func render(t *testing.T, evs []Event) []string {
	t.Helper()
	var lines []string
	for _, ev := range evs {
		if c, ok := ev.(*CustomEvent); ok {
			lines = append(lines, "CUSTOM "+c.Name)
			continue
		}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	return lines
}

// translate runs tack events through a translator and renders everything
// it returns, RUN_STARTED included.
func translate(t *testing.T, tr *Translator, in []*eventsv1.Event) []string {
	t.Helper()
	out := tr.Start()
	for _, ev := range in {
		out = append(out, tr.Next(ev)...)
	}
	return render(t, out)
}

func assertLines(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

const started = `{"type":"RUN_STARTED","threadId":"s1","runId":"r"}`

func TestTranslate(t *testing.T) {
	approvalArgs := `{"command":"rm -rf build"}`
	tests := []struct {
		name    string
		waiting []Interrupt
		in      func(s *script) []*eventsv1.Event
		want    []string
		done    bool
	}{{
		name: "plain text",
		in: func(s *script) []*eventsv1.Event {
			return []*eventsv1.Event{
				s.ev(&eventsv1.AgentStart{RunId: "r-1"}),
				s.ev(&eventsv1.MessageCommitted{Index: 0, Message: &eventsv1.Message{Role: "user", Content: "hi"}}),
				s.ev(&eventsv1.MessageStart{Role: "assistant"}),
				s.ev(&eventsv1.MessageDelta{Delta: "Hel"}),
				s.ev(&eventsv1.MessageDelta{Delta: "lo"}),
				s.ev(&eventsv1.ResponseComplete{Message: &eventsv1.Message{Role: "assistant", Content: "Hello"}, StopReason: "end_turn", Usage: usage(1, 2)}),
				s.ev(&eventsv1.MessageCommitted{Index: 1, Message: &eventsv1.Message{Role: "assistant", Content: "Hello"}}),
				s.ev(&eventsv1.StateChanged{From: "streaming", To: "idle"}),
				s.ev(&eventsv1.AgentEnd{RunId: "r-1", Reason: "completed", Usage: usage(1, 2)}),
				s.ev(&eventsv1.AgentStatus{Status: "idle"}),
			}
		},
		want: []string{
			started,
			"CUSTOM agent_start",
			"CUSTOM message_committed",
			`{"type":"TEXT_MESSAGE_START","messageId":"msg-3","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-3","delta":"Hel"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-3","delta":"lo"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"msg-3"}`,
			"CUSTOM state_changed",
			`{"type":"RUN_FINISHED","threadId":"s1","runId":"r","result":{"reason":"completed"},"outcome":{"type":"success"},"usage":[{"inputTokens":1,"outputTokens":2,"totalTokens":3}]}`,
		},
		done: true,
	}, {
		name: "thinking then text",
		in: func(s *script) []*eventsv1.Event {
			return []*eventsv1.Event{
				s.ev(&eventsv1.MessageStart{Role: "assistant"}),
				s.ev(&eventsv1.ThinkingStart{}),
				s.ev(&eventsv1.ThinkingDelta{Delta: "The user "}),
				s.ev(&eventsv1.ThinkingDelta{Delta: "greets."}),
				s.ev(&eventsv1.MessageDelta{Delta: "Hi!"}),
				s.ev(&eventsv1.ResponseComplete{Message: &eventsv1.Message{Role: "assistant", Content: "Hi!", Thinking: "The user greets."}}),
				s.ev(&eventsv1.AgentEnd{RunId: "r-1", Reason: "completed"}),
			}
		},
		want: []string{
			started,
			`{"type":"REASONING_START","messageId":"reasoning-2"}`,
			`{"type":"REASONING_MESSAGE_START","messageId":"reasoning-2","role":"reasoning"}`,
			`{"type":"REASONING_MESSAGE_CONTENT","messageId":"reasoning-2","delta":"The user "}`,
			`{"type":"REASONING_MESSAGE_CONTENT","messageId":"reasoning-2","delta":"greets."}`,
			`{"type":"REASONING_MESSAGE_END","messageId":"reasoning-2"}`,
			`{"type":"REASONING_END","messageId":"reasoning-2"}`,
			`{"type":"TEXT_MESSAGE_START","messageId":"msg-1","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":"Hi!"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"msg-1"}`,
			`{"type":"RUN_FINISHED","threadId":"s1","runId":"r","result":{"reason":"completed"},"outcome":{"type":"success"}}`,
		},
		done: true,
	}, {
		name: "tool call with result",
		in: func(s *script) []*eventsv1.Event {
			calls := []*eventsv1.ToolCall{{Id: "c-1", Name: "echo", Args: raw(`{"text":"hi"}`)}}
			return []*eventsv1.Event{
				s.ev(&eventsv1.MessageStart{Role: "assistant"}),
				s.ev(&eventsv1.MessageDelta{Delta: "Let me."}),
				s.ev(&eventsv1.ResponseComplete{Message: &eventsv1.Message{Role: "assistant", Content: "Let me.", ToolCalls: calls}, StopReason: "tool_calls"}),
				s.ev(&eventsv1.MessageCommitted{Index: 1, Message: &eventsv1.Message{Role: "assistant", Content: "Let me.", ToolCalls: calls}}),
				s.ev(&eventsv1.ToolExecutionStart{Name: "echo", CallId: "c-1", Args: raw(`{"text":"hi"}`)}),
				s.ev(&eventsv1.ToolExecutionEnd{Name: "echo", CallId: "c-1", Ok: true, Result: "hi"}),
				s.ev(&eventsv1.MessageCommitted{Index: 2, Message: &eventsv1.Message{Role: "tool", ToolCallId: "c-1", Content: "hi"}}),
				s.ev(&eventsv1.MessageStart{Role: "assistant"}),
				s.ev(&eventsv1.MessageDelta{Delta: "ok"}),
				s.ev(&eventsv1.ResponseComplete{Message: &eventsv1.Message{Role: "assistant", Content: "ok"}}),
				s.ev(&eventsv1.AgentEnd{RunId: "r-1", Reason: "completed"}),
			}
		},
		want: []string{
			started,
			`{"type":"TEXT_MESSAGE_START","messageId":"msg-1","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":"Let me."}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"msg-1"}`,
			`{"type":"TOOL_CALL_START","toolCallId":"c-1","toolCallName":"echo","parentMessageId":"msg-1"}`,
			`{"type":"TOOL_CALL_ARGS","toolCallId":"c-1","delta":"{\"text\":\"hi\"}"}`,
			`{"type":"TOOL_CALL_END","toolCallId":"c-1"}`,
			"CUSTOM tool_execution_start",
			"CUSTOM tool_execution_end",
			`{"type":"TOOL_CALL_RESULT","messageId":"result-7","toolCallId":"c-1","content":"hi","role":"tool"}`,
			`{"type":"TEXT_MESSAGE_START","messageId":"msg-8","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-8","delta":"ok"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"msg-8"}`,
			`{"type":"RUN_FINISHED","threadId":"s1","runId":"r","result":{"reason":"completed"},"outcome":{"type":"success"}}`,
		},
		done: true,
	}, {
		name: "tool errors",
		in: func(s *script) []*eventsv1.Event {
			calls := []*eventsv1.ToolCall{{Id: "c-1", Name: "nosuch"}, {Id: "c-2", Name: "shell", Args: raw(`{"command":"exit 3"}`)}}
			return []*eventsv1.Event{
				s.ev(&eventsv1.MessageStart{Role: "assistant"}),
				s.ev(&eventsv1.ResponseComplete{Message: &eventsv1.Message{Role: "assistant", ToolCalls: calls}}),
				s.ev(&eventsv1.ToolCallUnknown{Name: "nosuch", CallId: "c-1"}),
				s.ev(&eventsv1.MessageCommitted{Index: 2, Message: &eventsv1.Message{Role: "tool", ToolCallId: "c-1", Content: `unknown tool "nosuch"`, IsError: true}}),
				s.ev(&eventsv1.MessageCommitted{Index: 3, Message: &eventsv1.Message{Role: "tool", ToolCallId: "c-2", Content: "exit status 3", IsError: true}}),
			}
		},
		want: []string{
			started,
			`{"type":"TOOL_CALL_START","toolCallId":"c-1","toolCallName":"nosuch","parentMessageId":"msg-1"}`,
			`{"type":"TOOL_CALL_ARGS","toolCallId":"c-1","delta":"{}"}`,
			`{"type":"TOOL_CALL_END","toolCallId":"c-1"}`,
			`{"type":"TOOL_CALL_START","toolCallId":"c-2","toolCallName":"shell","parentMessageId":"msg-1"}`,
			`{"type":"TOOL_CALL_ARGS","toolCallId":"c-2","delta":"{\"command\":\"exit 3\"}"}`,
			`{"type":"TOOL_CALL_END","toolCallId":"c-2"}`,
			"CUSTOM tool_call_unknown",
			`{"type":"TOOL_CALL_RESULT","messageId":"result-4","toolCallId":"c-1","content":"error: unknown tool \"nosuch\"","role":"tool"}`,
			`{"type":"TOOL_CALL_RESULT","messageId":"result-5","toolCallId":"c-2","content":"error: exit status 3","role":"tool"}`,
		},
	}, {
		name: "approval interrupt",
		in: func(s *script) []*eventsv1.Event {
			calls := []*eventsv1.ToolCall{{Id: "c-1", Name: "shell", Args: raw(approvalArgs)}}
			return []*eventsv1.Event{
				s.ev(&eventsv1.MessageStart{Role: "assistant"}),
				s.ev(&eventsv1.ResponseComplete{Message: &eventsv1.Message{Role: "assistant", ToolCalls: calls}}),
				s.ev(&eventsv1.ToolExecutionStart{Name: "shell", CallId: "c-1", Args: raw(approvalArgs)}),
				s.ev(&eventsv1.ApprovalRequired{ApprovalId: "ap-1", Tool: "shell", CallId: "c-1", Args: raw(approvalArgs), Hint: "shell: rm -rf build"}),
				s.ev(&eventsv1.StateChanged{From: "executing_tools", To: "idle"}),
				s.ev(&eventsv1.AgentStatus{Status: "idle"}),
			}
		},
		want: []string{
			started,
			`{"type":"TOOL_CALL_START","toolCallId":"c-1","toolCallName":"shell","parentMessageId":"msg-1"}`,
			`{"type":"TOOL_CALL_ARGS","toolCallId":"c-1","delta":"{\"command\":\"rm -rf build\"}"}`,
			`{"type":"TOOL_CALL_END","toolCallId":"c-1"}`,
			"CUSTOM tool_execution_start",
			"CUSTOM approval_required",
			"CUSTOM state_changed",
			`{"type":"RUN_FINISHED","threadId":"s1","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"ap-1","reason":"tool_approval","message":"shell: rm -rf build","toolCallId":"c-1","responseSchema":` + string(approvalSchema) + `,"metadata":{"args":{"command":"rm -rf build"},"call_id":"c-1","hint":"shell: rm -rf build","tool":"shell"}}]}}`,
		},
		done: true,
	}, {
		name: "approve resumes",
		in: func(s *script) []*eventsv1.Event {
			s.seq = 10
			return []*eventsv1.Event{
				s.ev(&eventsv1.ApprovalResolved{ApprovalId: "ap-1", Status: "approved"}),
				s.ev(&eventsv1.StateChanged{From: "idle", To: "executing_tools"}),
				s.ev(&eventsv1.AgentResumed{Trigger: "tool_approved"}),
				s.ev(&eventsv1.MessageCommitted{Index: 2, Message: &eventsv1.Message{Role: "tool", ToolCallId: "c-1", Content: ""}}),
				s.ev(&eventsv1.MessageStart{Role: "assistant"}),
				s.ev(&eventsv1.MessageDelta{Delta: "Removed."}),
				s.ev(&eventsv1.ResponseComplete{Message: &eventsv1.Message{Role: "assistant", Content: "Removed."}}),
				s.ev(&eventsv1.StateChanged{From: "streaming", To: "idle"}),
				s.ev(&eventsv1.AgentEnd{RunId: "r-1", Reason: "completed"}),
			}
		},
		want: []string{
			started,
			"CUSTOM approval_resolved",
			"CUSTOM state_changed",
			"CUSTOM agent_resumed",
			`{"type":"TOOL_CALL_RESULT","messageId":"result-14","toolCallId":"c-1","content":"","role":"tool"}`,
			`{"type":"TEXT_MESSAGE_START","messageId":"msg-15","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-15","delta":"Removed."}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"msg-15"}`,
			"CUSTOM state_changed",
			`{"type":"RUN_FINISHED","threadId":"s1","runId":"r","result":{"reason":"completed"},"outcome":{"type":"success"}}`,
		},
		done: true,
	}, {
		name:    "an approval still waiting ends the run when the session is idle again",
		waiting: []Interrupt{ApprovalInterrupt("ap-2", "shell", "c-2", []byte(`{"command":"ls"}`), "")},
		in: func(s *script) []*eventsv1.Event {
			s.seq = 10
			return []*eventsv1.Event{
				s.ev(&eventsv1.ApprovalResolved{ApprovalId: "ap-1", Status: "approved"}),
				s.ev(&eventsv1.StateChanged{From: "idle", To: "executing_tools"}),
				s.ev(&eventsv1.MessageCommitted{Index: 2, Message: &eventsv1.Message{Role: "tool", ToolCallId: "c-1", Content: "done"}}),
				s.ev(&eventsv1.StateChanged{From: "executing_tools", To: "idle"}),
			}
		},
		want: []string{
			started,
			"CUSTOM approval_resolved",
			"CUSTOM state_changed",
			`{"type":"TOOL_CALL_RESULT","messageId":"result-13","toolCallId":"c-1","content":"done","role":"tool"}`,
			"CUSTOM state_changed",
			`{"type":"RUN_FINISHED","threadId":"s1","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"ap-2","reason":"tool_approval","toolCallId":"c-2","responseSchema":` + string(approvalSchema) + `,"metadata":{"args":{"command":"ls"},"call_id":"c-2","hint":"","tool":"shell"}}]}}`,
		},
		done: true,
	}, {
		name: "question interrupt",
		in: func(s *script) []*eventsv1.Event {
			calls := []*eventsv1.ToolCall{{Id: "c-1", Name: "ask_user", Args: raw(`{"question":"Which?","options":["a","b"]}`)}}
			return []*eventsv1.Event{
				s.ev(&eventsv1.MessageStart{Role: "assistant"}),
				s.ev(&eventsv1.ResponseComplete{Message: &eventsv1.Message{Role: "assistant", ToolCalls: calls}}),
				s.ev(&eventsv1.AskUser{Ref: "q-1", Question: "Which?", Options: []string{"a", "b"}}),
				s.ev(&eventsv1.StateChanged{From: "executing_tools", To: "idle"}),
			}
		},
		want: []string{
			started,
			`{"type":"TOOL_CALL_START","toolCallId":"c-1","toolCallName":"ask_user","parentMessageId":"msg-1"}`,
			`{"type":"TOOL_CALL_ARGS","toolCallId":"c-1","delta":"{\"question\":\"Which?\",\"options\":[\"a\",\"b\"]}"}`,
			`{"type":"TOOL_CALL_END","toolCallId":"c-1"}`,
			"CUSTOM ask_user",
			"CUSTOM state_changed",
			`{"type":"RUN_FINISHED","threadId":"s1","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"q-1","reason":"question","message":"Which?","responseSchema":` + string(questionSchema) + `,"metadata":{"options":["a","b"],"question":"Which?"}}]}}`,
		},
		done: true,
	}, {
		name: "respond resumes",
		in: func(s *script) []*eventsv1.Event {
			s.seq = 10
			return []*eventsv1.Event{
				s.ev(&eventsv1.UserResponded{Ref: "q-1", Response: "a"}),
				s.ev(&eventsv1.StateChanged{From: "idle", To: "executing_tools"}),
				s.ev(&eventsv1.MessageCommitted{Index: 2, Message: &eventsv1.Message{Role: "tool", ToolCallId: "c-1", Content: "a"}}),
				s.ev(&eventsv1.StateChanged{From: "streaming", To: "idle"}),
				s.ev(&eventsv1.AgentEnd{RunId: "r-1", Reason: "completed"}),
			}
		},
		want: []string{
			started,
			"CUSTOM user_responded",
			"CUSTOM state_changed",
			`{"type":"TOOL_CALL_RESULT","messageId":"result-13","toolCallId":"c-1","content":"a","role":"tool"}`,
			"CUSTOM state_changed",
			`{"type":"RUN_FINISHED","threadId":"s1","runId":"r","result":{"reason":"completed"},"outcome":{"type":"success"}}`,
		},
		done: true,
	}, {
		name: "abort mid-stream",
		in: func(s *script) []*eventsv1.Event {
			return []*eventsv1.Event{
				s.ev(&eventsv1.MessageStart{Role: "assistant"}),
				s.ev(&eventsv1.ThinkingDelta{Delta: "Hm"}),
				s.ev(&eventsv1.MessageDelta{Delta: "Work"}),
				s.ev(&eventsv1.AgentAbort{RunId: proto.String("r-1"), Reason: "user"}),
				s.ev(&eventsv1.MessageCommitted{Index: 1, Message: &eventsv1.Message{Role: "assistant", Content: "Work\n\n[interrupted]"}}),
				s.ev(&eventsv1.AgentEnd{RunId: "r-1", Reason: "aborted"}),
			}
		},
		want: []string{
			started,
			`{"type":"REASONING_START","messageId":"reasoning-2"}`,
			`{"type":"REASONING_MESSAGE_START","messageId":"reasoning-2","role":"reasoning"}`,
			`{"type":"REASONING_MESSAGE_CONTENT","messageId":"reasoning-2","delta":"Hm"}`,
			`{"type":"REASONING_MESSAGE_END","messageId":"reasoning-2"}`,
			`{"type":"REASONING_END","messageId":"reasoning-2"}`,
			`{"type":"TEXT_MESSAGE_START","messageId":"msg-1","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":"Work"}`,
			"CUSTOM agent_abort",
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":"\n\n[interrupted]"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"msg-1"}`,
			`{"type":"RUN_FINISHED","threadId":"s1","runId":"r","result":{"reason":"aborted"},"outcome":{"type":"cancelled"}}`,
		},
		done: true,
	}, {
		name: "model error",
		in: func(s *script) []*eventsv1.Event {
			return []*eventsv1.Event{
				s.ev(&eventsv1.RequestStart{Turn: 1, Model: "script:inline", MessageCount: 1}),
				s.ev(&eventsv1.Error{Code: "model_error", Message: "HTTP 400: bad"}),
				s.ev(&eventsv1.StateChanged{From: "running", To: "idle"}),
				s.ev(&eventsv1.AgentEnd{RunId: "r-1", Reason: "error"}),
				s.ev(&eventsv1.AgentStatus{Status: "idle"}),
			}
		},
		want: []string{
			started,
			"CUSTOM request_start",
			"CUSTOM error",
			"CUSTOM state_changed",
			`{"type":"RUN_ERROR","message":"HTTP 400: bad","code":"model_error"}`,
		},
		done: true,
	}, {
		name: "a text message left open is closed at the end",
		in: func(s *script) []*eventsv1.Event {
			return []*eventsv1.Event{
				s.ev(&eventsv1.MessageDelta{Delta: "partial"}),
				s.ev(&eventsv1.AgentEnd{RunId: "r-1", Reason: "loop_detected"}),
			}
		},
		want: []string{
			started,
			`{"type":"TEXT_MESSAGE_START","messageId":"msg-1","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":"partial"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"msg-1"}`,
			`{"type":"RUN_FINISHED","threadId":"s1","runId":"r","result":{"reason":"loop_detected"},"outcome":{"type":"success"}}`,
		},
		done: true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTranslator("s1", "r", tc.waiting...)
			assertLines(t, translate(t, tr, tc.in(&script{})), tc.want)
			if tr.Done() != tc.done {
				t.Errorf("Done() = %v, want %v", tr.Done(), tc.done)
			}
		})
	}
}
