package tack_test

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	cmds "github.com/tack-run/tack/server/command"
)

// fullLife is a script whose session, driven by richSession, has every
// part an export holds: compacted, rolled-back and working messages, a
// summary, an image, todos, a title and usage.
const fullLife = `{"turns":[
	{"text":"a1","usage":{"input_tokens":10,"output_tokens":2}},
	{"tool_calls":[{"name":"todo_write","args":{"todos":[{"text":"write the tests","status":"in_progress"}]}}]},
	{"text":"a2"},
	{"text":"summary one"},
	{"text":"slow","chunk_size":1,"chunk_delay_ms":20000},
	{"text":"a4"}]}`

// richSession drives session id of rt through fullLife: two runs, a
// compaction that keeps two messages, a run taken out by a rollback and
// one more run.
func richSession(t *testing.T, rt *tack.Runtime, id string) {
	t.Helper()
	ctx := t.Context()
	s, err := rt.Spawn(tack.SessionConfig{ID: id, Script: json.RawMessage(fullLife), Tools: []string{"todo_write"},
		System: "be brief", Context: &llmContext, QueueMode: "all"})
	if err != nil {
		t.Fatal(err)
	}
	promptAndWait(t, rt, id, "Plan the release\nwith care", "r-1")
	promptAndWait(t, rt, id, "p2", "r-2", tack.PromptOptions{Images: []*llm.Image{{Url: "https://example.com/plan.png", Detail: "low"}}})
	if removed := compactAndWait(t, s); removed == 0 {
		t.Fatal("the compaction removed nothing")
	}
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"message_delta", "agent_end"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := s.Prompt(ctx, "p3"); err != nil {
		t.Fatal(err)
	}
	for ev := range sub.C {
		if ev.GetMessageDelta() != nil {
			break // the slow answer streams
		}
	}
	if _, err := s.Prompt(ctx, "p4", tack.PromptOptions{IfBusy: "rollback"}); err != nil {
		t.Fatal(err)
	}
	for ev := range sub.C { // the replay holds the earlier runs' ends too
		if ev.GetAgentEnd().GetRunId() == "r-4" {
			break
		}
	}
}

// TestExportImportAcrossStores: a session exported from one store (as
// JSON, over the protocol's commands) and imported into another — SQLite
// into PostgreSQL and back, memory into SQLite — has the same get_messages
// with all, todos, title and usage, its marks included; a second export
// is the same document but for its id and time; the imported session
// goes on after its history; and it survives a restart of the importing
// runtime.
func TestExportImportAcrossStores(t *testing.T) {
	byName := map[string]storeCase{}
	for _, sc := range everyStore {
		byName[sc.name] = sc
	}
	for _, pair := range [][2]string{{"sqlite", "postgres"}, {"postgres", "sqlite"}, {"memory", "sqlite"}} {
		t.Run(pair[0]+" to "+pair[1], func(t *testing.T) {
			ctx := t.Context()
			from := byName[pair[0]].open(t, time.Now)
			defer from.Close()
			src, err := tack.New(tack.WithStore(from), tack.WithNode("a"))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			richSession(t, src, "orig")
			env := cmds.Env{Runtime: src}
			data, err := cmds.Run(ctx, env, "export_session", "orig", nil)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := eventjson.AppendMessage(nil, data)
			if err != nil {
				t.Fatal(err)
			}

			to := byName[pair[1]].open(t, time.Now)
			dst, err := tack.New(tack.WithStore(to), tack.WithNode("b"))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(map[string]json.RawMessage{"session": json.RawMessage(`"copy"`), "document": doc})
			created, err := cmds.Run(ctx, cmds.Env{Runtime: dst, User: "bob"}, "import_session", "", body)
			if err != nil {
				t.Fatal(err)
			}
			if got := created.(*eventsv1.Created).Session; got != "copy" {
				t.Fatalf("imported as %q", got)
			}
			same(t, src, "orig", dst, "copy")
			if u, err := dst.User(ctx, "copy"); err != nil || u != "bob" {
				t.Fatalf("the import's user %q, %v: want the importer", u, err)
			}
			again, err := cmds.Run(ctx, cmds.Env{Runtime: dst}, "export_session", "copy", nil)
			if err != nil {
				t.Fatal(err)
			}
			first, second := data.(*eventsv1.SessionExport), again.(*eventsv1.SessionExport)
			first.Session, first.ExportedAt = second.Session, second.ExportedAt
			if !proto.Equal(first, second) {
				t.Fatalf("the export of the import differs:\n%v\n%v", protojson.Format(first), protojson.Format(second))
			}

			// It goes on after its history; its script, a model of the
			// importing runtime, starts at the first turn.
			promptAndWait(t, dst, "copy", "p5", "r-1")
			msgs, err := dst.Messages(ctx, "copy")
			if err != nil || roles(msgs)[len(msgs)-2] != "user:p5" || roles(msgs)[len(msgs)-3] != "assistant:a4" {
				t.Fatalf("after the import %v, %v", roles(msgs), err)
			}
			dst.Close()
			back, err := tack.New(tack.WithStore(to), tack.WithNode("c"))
			if err != nil {
				t.Fatal(err)
			}
			defer back.Close()
			defer to.Close()
			if msgs, err := back.Messages(ctx, "copy"); err != nil || roles(msgs)[len(msgs)-2] != "user:p5" {
				t.Fatalf("after a restart %v, %v", roles(msgs), err)
			}
		})
	}
}

// same fails unless session a of ra and session b of rb have the same
// history (all of it, marks included), todos, title and usage.
func same(t *testing.T, ra *tack.Runtime, a string, rb *tack.Runtime, b string) {
	t.Helper()
	ctx := t.Context()
	sa, _ := ra.Session(a)
	sb, err := rb.Session(b)
	if err != nil {
		t.Fatal(err)
	}
	ma, err := sa.AllMessages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := sb.AllMessages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for i := range max(len(ma), len(mb)) {
		if i >= len(ma) || i >= len(mb) || !proto.Equal(ma[i], mb[i]) {
			t.Fatalf("message %d differs:\n%v\n%v", i, ma, mb)
		}
		switch {
		case ma[i].Compacted:
			kinds = append(kinds, "compacted")
		case ma[i].RolledBack:
			kinds = append(kinds, "rolled_back")
		case ma[i].Summary:
			kinds = append(kinds, "summary")
		default:
			kinds = append(kinds, ma[i].Role)
		}
	}
	images := 0
	for _, m := range ma {
		images += len(m.Images)
	}
	if got := strings.Join(kinds, " "); !strings.Contains(got, "compacted") || !strings.Contains(got, "rolled_back") || !strings.Contains(got, "summary") || images != 1 {
		t.Fatalf("the history has not every kind of message: %s, %d images", got, images)
	}
	wa, _ := sa.Messages(ctx)
	wb, _ := sb.Messages(ctx)
	if len(wa) != len(wb) {
		t.Fatalf("working histories of %d and %d messages", len(wa), len(wb))
	}
	sta, err := sa.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stb, err := sb.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sta.Title != "Plan the release" || sta.Title != stb.Title || !proto.Equal(sta.Usage, stb.Usage) ||
		len(sta.Todos) != 1 || !proto.Equal(sta.Todos[0], stb.Todos[0]) || stb.State != "idle" {
		t.Fatalf("state\n%v\n%v", sta, stb)
	}
}

// llmContext keeps two messages at a compaction.
var llmContext = llm.ContextConfig{KeepRecent: new(2)}

// TestImportWithoutStore: a runtime without a store imports into memory:
// the session is loaded, idle, with the history (its marks and the
// compacted part kept apart), and an id that is taken is bad_request.
func TestImportWithoutStore(t *testing.T) {
	rt, err := tack.New()
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx := t.Context()
	h := tack.History{Title: "old", Messages: []*eventsv1.Message{
		{Role: "user", Content: "before", Compacted: true},
		{Role: "user", Content: "summary", Summary: true},
		{Role: "user", Content: "dropped", RolledBack: true},
		{Role: "user", Content: "now"}, {Role: "assistant", Content: "yes"},
	}, Todos: []*eventsv1.Todo{{Text: "t", Status: "done"}}}
	cfg := tack.SessionConfig{ID: "i", Script: json.RawMessage(`{"turns":[{"text":"next"}]}`)}
	s, err := rt.Import(ctx, cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Messages(ctx)
	if err != nil || strings.Join(roles(msgs), ",") != "user:summary,user:now,assistant:yes" {
		t.Fatalf("working history %v, %v", roles(msgs), err)
	}
	all, err := s.AllMessages(ctx)
	if err != nil || len(all) != 5 || !proto.Equal(all[0], h.Messages[0]) || !proto.Equal(all[2], h.Messages[2]) {
		t.Fatalf("all messages %v, %v", all, err)
	}
	st, err := s.State(ctx)
	if err != nil || st.State != "idle" || st.Title != "old" || len(st.Todos) != 1 {
		t.Fatalf("state %v, %v", st, err)
	}
	if _, err := rt.Import(ctx, cfg, h); tack.Code(err) != events.CodeBadRequest {
		t.Fatalf("an import over a taken id: %v", err)
	}
	promptAndWait(t, rt, "i", "go on", "r-1")
}

// TestImportRefusesImpossibleUsage: usage no session could have spent —
// a negative count, a negative or infinite cost — is bad_request naming
// it; the limits plugin's budget counts from what an import brings.
func TestImportRefusesImpossibleUsage(t *testing.T) {
	rt, err := tack.New()
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	cfg := tack.SessionConfig{Script: json.RawMessage(`{"turns":[{"text":"next"}]}`)}
	for _, c := range []struct {
		h    tack.History
		want string
	}{
		{tack.History{Usage: &eventsv1.Usage{InputTokens: -9e18, TotalTokens: -9e18}}, "usage: input_tokens is negative (-9000000000000000000)"},
		{tack.History{Usage: &eventsv1.Usage{CostUsd: -1e300}}, "usage: cost_usd is -1e+300: want a finite amount, at least 0"},
		{tack.History{Usage: &eventsv1.Usage{CostUsd: math.Inf(1)}}, "usage: cost_usd is +Inf: want a finite amount, at least 0"},
		{tack.History{SubagentUsage: &eventsv1.Usage{ReasoningTokens: -1}}, "subagent_usage: reasoning_tokens is negative (-1)"},
		// Counts that would wrap the total around (and the limits
		// plugin's budget with it).
		{tack.History{Usage: &eventsv1.Usage{InputTokens: 1<<63 - 1, OutputTokens: 1}}, "usage: input_tokens is 9223372036854775807: more than any session spends (9007199254740992)"},
	} {
		_, err := rt.Import(t.Context(), cfg, c.h)
		if tack.Code(err) != events.CodeBadRequest || !strings.Contains(err.Error(), c.want) {
			t.Errorf("import with %v: %v, want bad_request %q", c.h.Usage, err, c.want)
		}
	}
	if ids := rt.Sessions(); len(ids) != 0 {
		t.Errorf("refused imports left sessions %v", ids)
	}
	s, err := rt.Import(t.Context(), cfg, tack.History{Usage: &eventsv1.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15, CostUsd: 0.01}})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := s.State(t.Context()); err != nil || st.Usage.GetTotalTokens() != 15 {
		t.Fatalf("state %v, %v", st, err)
	}
}

// TestImportStartsAsANewSession: an import is a new session, not a
// restore. Its events start at 1 with session_created, with no
// agent_recovered and no events_lost before them; its history is the
// document's, a call left without its result (an export taken while the
// call waited for a person) included; the next run goes on from it. With
// a store, a later restore numbers its events past those told.
func TestImportStartsAsANewSession(t *testing.T) {
	byName := map[string]storeCase{}
	for _, sc := range everyStore {
		byName[sc.name] = sc
	}
	for _, name := range []string{"none", "memory", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			var opts []tack.Option
			if name != "none" {
				st := byName[name].open(t, time.Now)
				defer st.Close()
				opts = append(opts, tack.WithStore(st))
			}
			rt, err := tack.New(opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			h := tack.History{Messages: []*eventsv1.Message{{Role: "user", Content: "go"},
				{Role: "assistant", ToolCalls: []*eventsv1.ToolCall{{Id: "c-1", Name: "echo", Args: &eventsv1.RawJSON{Json: []byte(`{"text":"x"}`)}}}}}}
			s, err := rt.Import(ctx, tack.SessionConfig{ID: "copy", Script: json.RawMessage(`{"turns":[{"text":"done"}]}`)}, h)
			if err != nil {
				t.Fatal(err)
			}
			all, err := s.AllMessages(ctx)
			if err != nil || len(all) != 2 || !proto.Equal(all[0], h.Messages[0]) || !proto.Equal(all[1], h.Messages[1]) {
				t.Fatalf("imported history %v, %v; want the document's %v", all, err, h.Messages)
			}
			sub, err := s.Subscribe(ctx, tack.SubscribeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			if _, err := s.Prompt(ctx, "go on"); err != nil {
				t.Fatal(err)
			}
			var told []string
			var last uint64
			for ev := range sub.C {
				told = append(told, fmt.Sprintf("%d %s", ev.Seq, events.Type(ev)))
				last = ev.Seq
				if ev.GetAgentEnd() != nil {
					break
				}
			}
			if told[0] != "1 session_created" || slices.ContainsFunc(told, func(s string) bool {
				return strings.HasSuffix(s, " agent_recovered") || strings.HasSuffix(s, " events_lost")
			}) {
				t.Fatalf("events of the import: %v", told)
			}
			msgs, err := s.AllMessages(ctx)
			if err != nil || msgs[len(msgs)-1].GetContent() != "done" {
				t.Fatalf("after the next run: %v, %v", msgs, err)
			}
			if name == "none" {
				return
			}
			s.Close()
			again, err := rt.Session("copy")
			if err != nil {
				t.Fatal(err)
			}
			sub2, err := again.Subscribe(ctx, tack.SubscribeOptions{Buffered: true})
			if err != nil {
				t.Fatal(err)
			}
			defer sub2.Close()
			if _, err := again.Prompt(ctx, "more"); err != nil {
				t.Fatal(err)
			}
			if ev := <-sub2.C; ev.Seq <= last || events.Type(ev) == "session_created" {
				t.Fatalf("the restored import told %d %s after %d was told", ev.Seq, events.Type(ev), last)
			}
		})
	}
}
