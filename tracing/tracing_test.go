package tracing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/tracing"
)

// traced is a runtime whose spans end up in exp as they end.
// content puts message content on the spans; opts configure the runtime.
func traced(t *testing.T, content bool, opts ...tack.Option) (*tack.Runtime, *sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	rt, err := tack.New(append(opts, tack.WithTracerProvider(tp, tracing.WithContent(content)))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(); _ = tp.Shutdown(context.Background()) })
	return rt, tp, exp
}

// waitFor reads sub until an event that ok accepts, and returns it; seen
// collects what it read.
func waitFor(t *testing.T, sub *tack.Subscription, seen *[]*eventsv1.Event, ok func(*eventsv1.Event) bool) *eventsv1.Event {
	t.Helper()
	for ev := range sub.C {
		*seen = append(*seen, ev)
		if ok(ev) {
			return ev
		}
	}
	t.Fatal("subscription closed")
	return nil
}

// tree renders spans, in the order they ended, as one line each: the
// span's name, its parent's name (@ its session, if it has one), its status, its attributes and its
// events (with theirs), sorted.
func tree(spans tracetest.SpanStubs) []string {
	names := map[string]string{}
	for _, s := range spans {
		names[s.SpanContext.SpanID().String()] = s.Name
		for _, a := range s.Attributes {
			if a.Key == tracing.ConversationID {
				names[s.SpanContext.SpanID().String()] += "@" + a.Value.AsString()
			}
		}
	}
	var out []string
	for _, s := range spans {
		parent := names[s.Parent.SpanID().String()]
		if !s.Parent.IsValid() {
			parent = "-"
		}
		line := fmt.Sprintf("%s < %s", s.Name, parent)
		if s.Status.Code.String() != "Unset" {
			line += " [" + s.Status.Code.String() + ": " + s.Status.Description + "]"
		}
		line += " " + attrs(s.Attributes)
		for _, e := range s.Events {
			line += " !" + e.Name + attrs(e.Attributes)
		}
		out = append(out, line)
	}
	return out
}

// attrs renders kv sorted; an abort's delivery time, which varies, shows
// as "within100ms" when it is above 0 and within the 100 ms the runtime
// guarantees.
func attrs(kv []attribute.KeyValue) string {
	var parts []string
	for _, a := range kv {
		v := a.Value.Emit()
		if d := a.Value.AsFloat64(); a.Key == tracing.AbortDelivery && d > 0 && d <= 0.1 {
			v = "within100ms"
		}
		parts = append(parts, string(a.Key)+"="+v)
	}
	slices.Sort(parts)
	return "{" + strings.Join(parts, " ") + "}"
}

func check(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("spans:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRunWithToolSteerAbort: a run under a parent span calls two tools,
// is steered (the sleeping tool is skipped), calls another and is
// aborted; its spans nest under the parent with the conventions'
// attributes, the steer and the abort as events of the run.
func TestRunWithToolSteerAbort(t *testing.T) {
	rt, tp, exp := traced(t, false)
	ctx := t.Context()
	script := `{"turns":[
		{"text":"Looking.","tool_calls":[{"name":"echo","args":{"text":"hi"}},{"name":"sleep","args":{"ms":60000}}],"usage":{"input_tokens":100,"output_tokens":10}},
		{"text":"Again.","tool_calls":[{"name":"sleep","args":{"ms":60000}}],"usage":{"input_tokens":200,"output_tokens":20}}]}`
	s, err := rt.Spawn(tack.SessionConfig{ID: "s", Script: json.RawMessage(script), Tools: []string{"echo", "sleep"}})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var seen []*eventsv1.Event
	pctx, parent := tp.Tracer("test").Start(ctx, "POST /v1/sessions/s/prompt")
	if _, err := s.Prompt(pctx, "go"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, sub, &seen, func(ev *eventsv1.Event) bool { return ev.GetToolExecutionEnd().GetName() == "echo" })
	if _, err := s.Steer(ctx, "stop sleeping", tack.SteerOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, sub, &seen, func(ev *eventsv1.Event) bool { return ev.GetTurnStart().GetTurn() == 2 })
	waitFor(t, sub, &seen, func(ev *eventsv1.Event) bool { return ev.GetToolExecutionStart() != nil })
	if err := s.Abort(ctx, tack.AbortOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, sub, &seen, func(ev *eventsv1.Event) bool { return ev.GetAgentEnd() != nil })
	parent.End()

	spans := exp.GetSpans()
	check(t, tree(spans), []string{
		`chat script:inline < invoke_agent@s {gen_ai.conversation.id=s gen_ai.operation.name=chat gen_ai.request.model=script:inline gen_ai.response.finish_reasons=["tool_calls"] gen_ai.response.model=script:inline gen_ai.usage.input_tokens=100 gen_ai.usage.output_tokens=10 tack.turn=1}`,
		`execute_tool echo < invoke_agent@s {gen_ai.operation.name=execute_tool gen_ai.tool.call.id=c-1 gen_ai.tool.name=echo}`,
		`execute_tool sleep < invoke_agent@s [Error: tool call failed] {error.type=tool_error gen_ai.operation.name=execute_tool gen_ai.tool.call.id=c-2 gen_ai.tool.name=sleep} !tool_skipped_for_steering{}`,
		`chat script:inline < invoke_agent@s {gen_ai.conversation.id=s gen_ai.operation.name=chat gen_ai.request.model=script:inline gen_ai.response.finish_reasons=["tool_calls"] gen_ai.response.model=script:inline gen_ai.usage.input_tokens=200 gen_ai.usage.output_tokens=20 tack.turn=2}`,
		`execute_tool sleep < invoke_agent@s [Error: tool call failed] {error.type=tool_error gen_ai.operation.name=execute_tool gen_ai.tool.call.id=c-3 gen_ai.tool.name=sleep} !tool_killed{tack.reason=aborted}`,
		`invoke_agent < POST /v1/sessions/s/prompt {gen_ai.conversation.id=s gen_ai.operation.name=invoke_agent gen_ai.usage.input_tokens=300 gen_ai.usage.output_tokens=30 tack.run.end_reason=aborted tack.run.id=r-1} !steer{tack.steer.ref=st-1 tack.steer.status=accepted} !abort{tack.abort.delivery_seconds=within100ms tack.reason=user}`,
		`POST /v1/sessions/s/prompt < - {}`,
	})
	// The spans are in the parent's trace and take their times from the
	// events: the run from agent_start to agent_end, the abort at the time
	// agent_abort went out.
	at := func(ok func(*eventsv1.Event) bool) int64 {
		i := slices.IndexFunc(seen, ok)
		if i < 0 {
			t.Fatal("event not seen")
		}
		return seen[i].TsUnixNano
	}
	run := spans[5]
	if run.SpanContext.TraceID() != parent.SpanContext().TraceID() {
		t.Errorf("run in trace %s, parent in %s", run.SpanContext.TraceID(), parent.SpanContext().TraceID())
	}
	times := []int64{run.StartTime.UnixNano(), run.EndTime.UnixNano(), run.Events[1].Time.UnixNano()}
	want := []int64{
		at(func(ev *eventsv1.Event) bool { return ev.GetAgentStart() != nil }),
		at(func(ev *eventsv1.Event) bool { return ev.GetAgentEnd() != nil }),
		at(func(ev *eventsv1.Event) bool { return ev.GetAgentAbort() != nil }),
	}
	if !slices.Equal(times, want) {
		t.Errorf("run start, end, abort at %v, want the events' %v", times, want)
	}
}

// TestSubagentWithContent: a sub-agent's run nests under the parent's
// execute_tool subagent span, its own request under it; with content on,
// the prompt, the answers and the tool's arguments and result are on the
// spans.
func TestSubagentWithContent(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "child.json"), []byte(`{"turns":[{"text":"Found it.","usage":{"input_tokens":7,"output_tokens":3}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	rt, _, exp := traced(t, true, tack.WithScriptDir(dir))
	ctx := t.Context()
	script := `{"turns":[
		{"text":"Asking.","tool_calls":[{"name":"subagent","args":{"task":"find","model":"script:child.json"}}],"usage":{"input_tokens":10,"output_tokens":2}},
		{"text":"Done.","usage":{"input_tokens":20,"output_tokens":1}}]}`
	s, err := rt.Spawn(tack.SessionConfig{ID: "p", Script: json.RawMessage(script), Tools: []string{"subagent"}})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := s.Prompt(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	var seen []*eventsv1.Event
	waitFor(t, sub, &seen, func(ev *eventsv1.Event) bool { return ev.GetAgentEnd() != nil })
	check(t, tree(exp.GetSpans()), []string{
		`chat script:inline < invoke_agent@p {gen_ai.conversation.id=p gen_ai.operation.name=chat gen_ai.output.messages=[{"role":"assistant","parts":[{"type":"text","content":"Asking."}]}] gen_ai.request.model=script:inline gen_ai.response.finish_reasons=["tool_calls"] gen_ai.response.model=script:inline gen_ai.usage.input_tokens=10 gen_ai.usage.output_tokens=2 tack.turn=1}`,
		`chat script:child.json < invoke_agent@p/sub-1 {gen_ai.conversation.id=p/sub-1 gen_ai.operation.name=chat gen_ai.output.messages=[{"role":"assistant","parts":[{"type":"text","content":"Found it."}]}] gen_ai.request.model=script:child.json gen_ai.response.finish_reasons=["end_turn"] gen_ai.response.model=script:child.json gen_ai.usage.input_tokens=7 gen_ai.usage.output_tokens=3 tack.turn=1}`,
		`invoke_agent < execute_tool subagent {gen_ai.conversation.id=p/sub-1 gen_ai.input.messages=[{"role":"user","parts":[{"type":"text","content":"find"}]}] gen_ai.operation.name=invoke_agent gen_ai.usage.input_tokens=7 gen_ai.usage.output_tokens=3 tack.run.end_reason=completed tack.run.id=r-1}`,
		`execute_tool subagent < invoke_agent@p {gen_ai.operation.name=execute_tool gen_ai.tool.call.arguments={"task":"find","model":"script:child.json"} gen_ai.tool.call.id=c-1 gen_ai.tool.call.result=Found it. gen_ai.tool.name=subagent tack.subagent.session=p/sub-1}`,
		`chat script:inline < invoke_agent@p {gen_ai.conversation.id=p gen_ai.operation.name=chat gen_ai.output.messages=[{"role":"assistant","parts":[{"type":"text","content":"Done."}]}] gen_ai.request.model=script:inline gen_ai.response.finish_reasons=["end_turn"] gen_ai.response.model=script:inline gen_ai.usage.input_tokens=20 gen_ai.usage.output_tokens=1 tack.turn=2}`,
		`invoke_agent < - {gen_ai.conversation.id=p gen_ai.input.messages=[{"role":"user","parts":[{"type":"text","content":"go"}]}] gen_ai.operation.name=invoke_agent gen_ai.usage.input_tokens=30 gen_ai.usage.output_tokens=3 tack.run.end_reason=completed tack.run.id=r-1}`,
	})
}

// TestCompactOutsideRun: a compaction asked for while idle (of the first
// exchange, keeping the second) is a root compact span, from compact_start to compact_end, with what it removed.
func TestCompactOutsideRun(t *testing.T) {
	rt, _, exp := traced(t, false)
	ctx := t.Context()
	keep := 2
	s, err := rt.Spawn(tack.SessionConfig{ID: "c", Context: &llm.ContextConfig{KeepRecent: &keep},
		Script: json.RawMessage(`{"turns":[{"text":"One."},{"text":"Two."},{"text":"Summary."}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"agent_end", "compact_start", "compact_end"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var seen []*eventsv1.Event
	for _, text := range []string{"first", "second"} {
		if _, err := s.Prompt(ctx, text); err != nil {
			t.Fatal(err)
		}
		waitFor(t, sub, &seen, func(ev *eventsv1.Event) bool { return ev.GetAgentEnd() != nil })
	}
	exp.Reset()
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	end := waitFor(t, sub, &seen, func(ev *eventsv1.Event) bool { return ev.GetCompactEnd() != nil })
	check(t, tree(exp.GetSpans()), []string{
		"compact < - {gen_ai.conversation.id=c tack.compact.removed=2}",
	})
	if got := exp.GetSpans()[0]; got.StartTime.UnixNano() != seen[len(seen)-2].TsUnixNano || got.EndTime.UnixNano() != end.TsUnixNano {
		t.Errorf("compact from %v to %v, want the events' %d to %d", got.StartTime, got.EndTime, seen[len(seen)-2].TsUnixNano, end.TsUnixNano)
	}
}
