package agui

import (
	"encoding/json"
	"testing"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

func TestCustomCarriesTheEventJSON(t *testing.T) {
	s := &script{}
	ev := s.ev(&eventsv1.ToolExecutionStart{Name: "echo", CallId: "c-1", Args: raw(`{"text":"hi"}`)})
	ev.TsUnixNano = 1_700_000_000_123_456_000
	out := NewTranslator("s1", "r").Next(ev)
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"type":"CUSTOM","name":"tool_execution_start","value":{"type":"tool_execution_start","session":"s1","seq":1,"ts":"2023-11-14T22:13:20.123456Z","name":"echo","call_id":"c-1","args":{"text":"hi"}}}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestNothingAfterTheEnd(t *testing.T) {
	s := &script{}
	tr := NewTranslator("s1", "r")
	tr.Next(s.ev(&eventsv1.AgentEnd{RunId: "r-1", Reason: "completed"}))
	if out := tr.Next(s.ev(&eventsv1.AgentStatus{Status: "idle"})); out != nil {
		t.Errorf("Next after the end = %v", render(t, out))
	}
	if out := tr.Idle(); out != nil {
		t.Errorf("Idle after the end = %v", render(t, out))
	}
	if out := tr.Fail("not_alive", "closed"); out != nil {
		t.Errorf("Fail after the end = %v", render(t, out))
	}
}

func TestIdleAndFail(t *testing.T) {
	s := &script{}
	tr := NewTranslator("s1", "r", QuestionInterrupt("q-3", "Go?", nil))
	assertLines(t, render(t, tr.Idle()), []string{
		`{"type":"RUN_FINISHED","threadId":"s1","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"q-3","reason":"question","message":"Go?","responseSchema":` + string(questionSchema) + `,"metadata":{"options":[],"question":"Go?"}}]}}`,
	})
	assertLines(t, render(t, NewTranslator("s1", "r").Idle()), []string{
		`{"type":"RUN_FINISHED","threadId":"s1","runId":"r","outcome":{"type":"success"}}`,
	})
	tr = NewTranslator("s1", "r")
	tr.Next(s.ev(&eventsv1.MessageStart{Role: "assistant"}))
	tr.Next(s.ev(&eventsv1.MessageDelta{Delta: "x"}))
	assertLines(t, render(t, tr.Fail("not_alive", `session "s1" closed`)), []string{
		`{"type":"TEXT_MESSAGE_END","messageId":"msg-1"}`,
		`{"type":"RUN_ERROR","message":"session \"s1\" closed","code":"not_alive"}`,
	})
}
