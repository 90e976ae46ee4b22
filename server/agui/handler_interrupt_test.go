package agui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// assertInterrupts checks the interrupts of a RUN_FINISHED against want,
// a JSON array (compared after decoding, so key order does not matter).
func assertInterrupts(t *testing.T, ev map[string]any, want string) {
	t.Helper()
	o, _ := ev["outcome"].(map[string]any)
	if ev["type"] != "RUN_FINISHED" || o["type"] != "interrupt" {
		t.Fatalf("want RUN_FINISHED with an interrupt, got %v", ev)
	}
	got, _ := json.Marshal(o["interrupts"])
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	wantCanon, _ := json.Marshal(w)
	if string(got) != string(wantCanon) {
		t.Errorf("interrupts\n got %s\nwant %s", got, wantCanon)
	}
}

func TestApprovalInterruptAndResume(t *testing.T) {
	const script = `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"hi"}}]},{"text":"done"}]}`
	for _, tc := range []struct {
		name, payload string
		result        string
		last          []string
	}{
		{"approve", `{"approved":true}`, "hi", []string{"TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"}},
		{"reject", `{"approved":false,"reason":"not now"}`, "error: rejected: not now", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			sess := s.spawn(t, "s1", script, `approval:{"tools":["echo"]}`)
			evs := s.run(t, "s1", input("s1", "run-1", "echo hi"))
			assertInterrupts(t, evs[len(evs)-1], `[{"id":"ap-1","message":"echo: {\"text\":\"hi\"}","metadata":{"args":{"text":"hi"},"call_id":"c-1","hint":"echo: {\"text\":\"hi\"}","tool":"echo"},"reason":"tool_approval","responseSchema":`+string(approvalSchema)+`,"toolCallId":"c-1"}]`)
			if n := names(evs); n[len(n)-2] != "CUSTOM:state_changed" || n[len(n)-3] != "CUSTOM:approval_required" {
				t.Errorf("the run does not end on the approval: %v", n)
			}

			evs = s.run(t, "s1", resumeInput("s1", "run-2", `[{"interruptId":"ap-1","status":"resolved","payload":`+tc.payload+`}]`))
			n := names(evs)
			if n[0] != "RUN_STARTED" || n[1] != "CUSTOM:approval_resolved" || n[len(n)-1] != "RUN_FINISHED" {
				t.Fatalf("resumed run: %v", n)
			}
			if result := find(evs, "TOOL_CALL_RESULT"); result["toolCallId"] != "c-1" || result["content"] != tc.result {
				t.Errorf("TOOL_CALL_RESULT %v, want content %q", result, tc.result)
			}
			var text []string
			for _, x := range n {
				if strings.HasPrefix(x, "TEXT_") {
					text = append(text, x)
				}
			}
			assertLines(t, text, tc.last)
			msgs, err := sess.Messages(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) != 3+len(tc.last)/3 {
				t.Errorf("history has %d messages: %v", len(msgs), msgs)
			}
		})
	}
}

func TestQuestionInterruptAndRespond(t *testing.T) {
	s := newServer(t)
	sess := s.spawn(t, "s1", `{"turns":[{"tool_calls":[{"name":"ask_user","args":{"question":"Which?","options":["a","b"]}}]},{"text":"You chose."}]}`, "ask_user")
	evs := s.run(t, "s1", input("s1", "run-1", "ask me"))
	assertInterrupts(t, evs[len(evs)-1], `[{"id":"q-1","message":"Which?","metadata":{"options":["a","b"],"question":"Which?"},"reason":"question","responseSchema":`+string(questionSchema)+`}]`)
	evs = s.run(t, "s1", resumeInput("s1", "run-2", `[{"interruptId":"q-1","status":"resolved","payload":{"response":"b"}}]`))
	assertNames(t, evs, seq("RUN_STARTED", "CUSTOM:user_responded", "CUSTOM:state_changed", "CUSTOM:agent_resumed", "CUSTOM:agent_status",
		"CUSTOM:tool_execution_end", "CUSTOM:tool_execution_metrics", "TOOL_CALL_RESULT", "CUSTOM:turn_end",
		"CUSTOM:state_changed", "CUSTOM:agent_status", "CUSTOM:turn_start", "CUSTOM:request_start", "CUSTOM:state_changed",
		"TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", turnEnd, runEnd)...)
	st, err := sess.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.GetState() != "idle" || st.GetPendingQuestion() != nil || st.GetMessageCount() != 4 {
		t.Errorf("state after the answer: %v", st)
	}
}

// TestTwoApprovals: a batch with two held calls ends the run with two
// interrupts; answering one leaves the other as the next run's interrupt;
// answering that finishes the run.
func TestTwoApprovals(t *testing.T) {
	s := newServer(t)
	s.spawn(t, "s1", `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"a"}},{"name":"echo","args":{"text":"b"}}]},{"text":"both"}]}`, `approval:{"tools":["echo"]}`)
	evs := s.run(t, "s1", input("s1", "run-1", "go"))
	var ids []string
	o := evs[len(evs)-1]["outcome"].(map[string]any)
	for _, i := range o["interrupts"].([]any) {
		ids = append(ids, i.(map[string]any)["id"].(string))
	}
	assertLines(t, ids, []string{"ap-1", "ap-2"})

	evs = s.run(t, "s1", resumeInput("s1", "run-2", `[{"interruptId":"ap-1","status":"resolved","payload":{"approved":true}}]`))
	assertInterrupts(t, evs[len(evs)-1], `[{"id":"ap-2","reason":"tool_approval","toolCallId":"c-2","responseSchema":`+string(approvalSchema)+`,"metadata":{"args":{"text":"b"},"call_id":"c-2","hint":"","tool":"echo"}}]`)
	if r := find(evs, "TOOL_CALL_RESULT"); r["toolCallId"] != "c-1" || r["content"] != "a" {
		t.Errorf("TOOL_CALL_RESULT %v", r)
	}

	evs = s.run(t, "s1", resumeInput("s1", "run-3", `[{"interruptId":"ap-2","status":"resolved","payload":{"approved":true}}]`))
	n := names(evs)
	if r := find(evs, "TOOL_CALL_RESULT"); r["toolCallId"] != "c-2" || r["content"] != "b" || n[len(n)-1] != "RUN_FINISHED" || find(evs, "TEXT_MESSAGE_CONTENT")["delta"] != "both" {
		t.Errorf("last run: %v", n)
	}
}
