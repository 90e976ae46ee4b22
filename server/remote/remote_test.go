package remote_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/server/remote/remotev1"
)

// hello answers once, in two chunks.
const hello = `{"turns":[{"text":"Hello there","chunk_size":6}]}`

// TestRemoteRun: a session created and driven from another actor system;
// its subscriber gets every event, in order, with exact types.
func TestRemoteRun(t *testing.T) {
	n := startNode(t, "--store", "sqlite:"+filepath.Join(t.TempDir(), "tack.db"))
	c := newClient(t, n.Addr)
	s := c.create(t, "r1", hello)
	sub := c.subscribe(t, s, 0)
	if r := c.reply(t, s, &eventsv1.Prompt{Text: "hi"}); r.GetPrompt().GetQueued() {
		t.Fatal("prompt queued at idle")
	}
	evs := sub.until(t, "agent_end")
	wantTypes(t, evs, "session_created", "prompt_received", "agent_start", "message_committed", "state_changed", "agent_status",
		"turn_start", "request_start", "state_changed", "message_start", "message_delta", "message_delta", "response_complete",
		"message_committed", "token_usage", "turn_end", "state_changed", "agent_status", "agent_end")
	consecutive(t, evs, 1)
	if d := evs[10].GetMessageDelta().GetDelta() + evs[11].GetMessageDelta().GetDelta(); d != "Hello there" {
		t.Errorf("deltas %q", d)
	}
	if st := c.state(t, s); st.State != "idle" || st.MessageCount != 2 {
		t.Errorf("state %v", st)
	}
}

// sleeper starts a long killable sleep, then answers.
const sleeper = `{"turns":[{"text":"Sleeping.","tool_calls":[{"name":"sleep","args":{"ms":30000}}]},{"text":"Done."}]}`

// TestRemoteAbortReachesSubscriber: agent_abort reaches a subscriber in
// another actor system promptly; the run ends aborted.
func TestRemoteAbortReachesSubscriber(t *testing.T) {
	n := startNode(t, "--store", "memory")
	c := newClient(t, n.Addr)
	s := c.create(t, "a1", sleeper)
	sub := c.subscribe(t, s, 0, "tool_execution_start", "agent_abort", "agent_end")
	c.reply(t, s, &eventsv1.Prompt{Text: "go"})
	wantTypes(t, []*eventsv1.Event{sub.next(t)}, "tool_execution_start")
	start := time.Now()
	c.sys.Root.Send(s, &eventsv1.Abort{})
	abort := sub.next(t)
	elapsed := time.Since(start)
	end := sub.next(t)
	wantTypes(t, []*eventsv1.Event{abort, end}, "agent_abort", "agent_end")
	if r := end.GetAgentEnd().GetReason(); r != "aborted" {
		t.Fatalf("agent_end reason %q", r)
	}
	t.Logf("abort command to agent_abort at the remote subscriber: %v", elapsed)
	if !raceEnabled && elapsed > 100*time.Millisecond {
		t.Fatalf("agent_abort took %v, over the 100 ms bound", elapsed)
	}
}

// TestRemoteResumeAfterReconnect: a subscriber whose process went away
// subscribes again from another one with since, and gets what it missed
// and then live events, with no gap and no duplicate.
func TestRemoteResumeAfterReconnect(t *testing.T) {
	n := startNode(t, "--store", "memory", "-v")
	c := newClient(t, n.Addr)
	s := c.create(t, "r2", `{"turns":[{"text":"one"},{"text":"two"},{"text":"three"}]}`)
	first := follow(t, n.Addr, "r2")
	c.reply(t, s, &eventsv1.Prompt{Text: "first"})
	var last uint64
	for {
		f := strings.Fields(first.line(t))
		seq, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil || seq != last+1 {
			t.Fatalf("follower printed %q after seq %d", f, last)
		}
		last = seq
		if f[1] == "agent_end" {
			break
		}
	}
	first.kill()
	n.WaitLog(t, "dropped a subscriber", `"session": "r2"`)

	// Meanwhile, a second run.
	c.reply(t, s, &eventsv1.Prompt{Text: "second"})
	eventually.Within(t, wait, func() error {
		if n := c.state(t, s).MessageCount; n != 4 {
			return fmt.Errorf("the second run did not end: %d messages", n)
		}
		return nil
	})
	resumed := c.subscribe(t, s, last)
	missed := resumed.until(t, "agent_end")
	consecutive(t, missed, last+1)
	wantTypes(t, missed[:1], "prompt_received")
	// Live events follow the replay.
	c.reply(t, s, &eventsv1.Prompt{Text: "third"})
	live := resumed.until(t, "agent_end")
	consecutive(t, live, missed[len(missed)-1].Seq+1)
}

// TestRemoteSubscriberDropped: a subscriber in a process that is killed is
// dropped by the session (the node logs it, with why), and the session
// goes on serving others.
func TestRemoteSubscriberDropped(t *testing.T) {
	n := startNode(t, "--store", "memory", "-v")
	c := newClient(t, n.Addr)
	s := c.create(t, "d1", hello)
	follow(t, n.Addr, "d1").kill()
	line := n.WaitLog(t, "dropped a subscriber", `"session": "d1"`)
	if !strings.Contains(line, "AddressTerminated") {
		t.Errorf("dropped for another reason: %s", line)
	}
	// The session goes on, and a live subscriber still gets its events.
	mine := c.subscribe(t, s, 0, "agent_end")
	c.reply(t, s, &eventsv1.Prompt{Text: "hi"})
	wantTypes(t, []*eventsv1.Event{mine.next(t)}, "agent_end")
}

// TestRemoteErrors: what the node answers to what it cannot do.
func TestRemoteErrors(t *testing.T) {
	n := startNode(t, "--store", "sqlite:"+filepath.Join(t.TempDir(), "tack.db"), "-v")
	c := newClient(t, n.Addr)
	gw := remotev1.GatewayPID(n.Addr)
	s := c.create(t, "e1", hello)
	cases := []struct {
		name       string
		to         *actor.PID
		msg        any
		code, msg2 string
	}{
		{"lookup of an unknown session", gw, &remotev1.Lookup{Session: "nope"}, "invalid_session", `no session "nope"`},
		{"a session command at the gateway", gw, &eventsv1.Prompt{Text: "hi"}, "bad_request", "tack.events.v1.Prompt is not a gateway command (CreateSession, ImportSession, ListSessions, Lookup); session commands go to the session's PID"},
		{"a message that is no command", s, &eventsv1.Created{Session: "x"}, "bad_request", "*eventsv1.Created is not a session command"},
		{"a bad option", s, &eventsv1.Prompt{Text: "hi", IfBusy: "maybe"}, "bad_request", ""},
		{"a bad filter", s, &remotev1.Subscribe{Subscriber: gw, Types: []string{"*x"}}, "bad_request", ""},
		{"subscribe without a subscriber", s, &remotev1.Subscribe{}, "bad_request", "Subscribe needs subscriber: the PID the events go to"},
		{"a session that exists", gw, &eventsv1.CreateSession{Session: "e1", Model: "script:demo"}, "bad_request", `session "e1" exists`},
		{"an unknown model", gw, &eventsv1.CreateSession{Session: "e2", Model: "nope/model"}, "unknown_model", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := c.request(t, tc.to, tc.msg)
			var e *eventsv1.ErrorInfo
			switch r := res.(type) {
			case *eventsv1.Reply:
				e = r.Error
			case *remotev1.SessionRef:
				e = r.Error
			}
			if e.GetCode() != tc.code || tc.msg2 != "" && e.GetMessage() != tc.msg2 {
				t.Fatalf("answer %v, want %s %q", res, tc.code, tc.msg2)
			}
		})
	}
	// A PID no session was created or looked up at is no one's: the
	// caller gets protoactor's dead-letter answer.
	if _, err := c.sys.Root.RequestFuture(remotev1.SessionPID(n.Addr, "nope"), &eventsv1.GetState{}, wait).Result(); err != actor.ErrDeadLetter {
		t.Fatalf("unknown PID: %v, want dead letter", err)
	}
	// A message of a type the node does not know costs the sender its
	// connection, not the node its life: the next request connects again.
	c.sys.Root.Send(s, unknownMessage(t))
	n.WaitLog(t, "dropped a remote connection")
	st := eventually.Value(t, wait, func() (*eventsv1.SessionState, error) {
		res, err := c.sys.Root.RequestFuture(s, &eventsv1.GetState{}, time.Second).Result()
		if r, ok := res.(*eventsv1.Reply); ok && err == nil && r.GetState() != nil {
			return r.GetState(), nil
		}
		return nil, fmt.Errorf("the node does not answer after an unknown message: %v", err)
	})
	if st.State != "idle" {
		t.Fatalf("after an unknown message: %v", st)
	}
}

// TestRemoteNodeRestart: a node restarted on the same SQLite file finds
// the session again (Lookup restores it) with its history.
func TestRemoteNodeRestart(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "tack.db")
	n := startNode(t, "--store", db)
	c := newClient(t, n.Addr)
	s := c.create(t, "k1", `{"turns":[{"text":"one"},{"text":"two"}]}`)
	sub := c.subscribe(t, s, 0, "agent_end")
	c.reply(t, s, &eventsv1.Prompt{Text: "first"})
	sub.next(t)
	n.Stop(t)

	n2 := startNode(t, "--store", db)
	c2 := newClient(t, n2.Addr) // the same actor system, another node address
	ref, ok := c2.request(t, remotev1.GatewayPID(n2.Addr), &remotev1.Lookup{Session: "k1"}).(*remotev1.SessionRef)
	if !ok || ref.Error != nil || !ref.Pid.Equal(remotev1.SessionPID(n2.Addr, "k1")) {
		t.Fatalf("lookup: %v", ref)
	}
	sub2 := c2.subscribe(t, ref.Pid, 0, "agent_end")
	c2.reply(t, ref.Pid, &eventsv1.Prompt{Text: "second"})
	sub2.next(t)
	msgs := c2.reply(t, ref.Pid, &eventsv1.GetMessages{}).GetMessages().GetMessages()
	var got []string
	for _, m := range msgs {
		got = append(got, m.Role+":"+m.Content)
	}
	if want := []string{"user:first", "assistant:one", "user:second", "assistant:two"}; !slices.Equal(got, want) {
		t.Fatalf("history %q, want %q", got, want)
	}
}

// TestRemotePassivation: a session quiet for --passivate-after leaves the
// node's memory; its PID still takes commands, which restore it, and its
// subscriber is told the gap, then gets the new run.
func TestRemotePassivation(t *testing.T) {
	n := startNode(t, "--store", "sqlite:"+filepath.Join(t.TempDir(), "tack.db"), "--passivate-after", "100ms")
	c := newClient(t, n.Addr)
	s := c.create(t, "p1", `{"turns":[{"text":"one"},{"text":"two"}]}`)
	sub := c.subscribe(t, s, 0, "agent_end", "events_lost")
	c.reply(t, s, &eventsv1.Prompt{Text: "first"})
	// A session quiet for 100 ms passivates, and an actor subscriber does
	// not keep it loaded: on a slow machine it may do so before the first
	// prompt, which restores it and tells events_lost first.
	seen := sub.until(t, "agent_end")
	end := seen[len(seen)-1]
	eventually.Within(t, wait, func() error {
		if c.listLoaded(t, "p1") {
			return errors.New("not passivated")
		}
		return nil
	})
	c.reply(t, s, &eventsv1.Prompt{Text: "second"})
	lost, end2 := sub.next(t), sub.next(t)
	wantTypes(t, []*eventsv1.Event{lost, end2}, "events_lost", "agent_end")
	if l := lost.GetEventsLost(); l.From != end.Seq+1 || l.To < l.From {
		t.Fatalf("events_lost %v after seq %d", l, end.Seq)
	}
	if st := c.state(t, s); st.MessageCount != 4 {
		t.Fatalf("state %v", st)
	}
}

// TestRemoteSpawnByKind: spawning the kind tack.session named after a
// session answers that session's PID.
func TestRemoteSpawnByKind(t *testing.T) {
	n := startNode(t, "--store", "memory")
	c := newClient(t, n.Addr)
	s := c.create(t, "kind1", hello)
	res, err := c.remote.SpawnNamed(n.Addr, "kind1", "tack.session", wait)
	if err != nil || res.StatusCode != 0 || !res.Pid.Equal(s) {
		t.Fatalf("spawn by kind: %v, %v", res, err)
	}
	// Without a default model a new name cannot be spawned.
	res, err = c.remote.SpawnNamed(n.Addr, "kind2", "tack.session", wait)
	if err != nil || res.StatusCode != remote.ResponseStatusCodeERROR.ToInt32() {
		t.Fatalf("spawn of a new session without a default model: %v, %v", res, err)
	}
}

// TestRemoteExportImportDelete: over protoactor remote a session exports
// as the document, imports at the gateway under a new id with the same
// history, and is deleted: afterwards it is invalid_session.
func TestRemoteExportImportDelete(t *testing.T) {
	n := startNode(t, "--store", "sqlite:"+filepath.Join(t.TempDir(), "tack.db"))
	c := newClient(t, n.Addr)
	s := c.create(t, "orig", hello)
	sub := c.subscribe(t, s, 0)
	c.reply(t, s, &eventsv1.Prompt{Text: "hi"})
	sub.until(t, "agent_end")
	doc := c.reply(t, s, &eventsv1.ExportSession{}).GetExport()
	if doc.GetFormat() != "tack.session/v1" || len(doc.GetMessages()) != 2 || doc.GetMessages()[1].GetContent() != "Hello there" {
		t.Fatalf("export %v", doc)
	}
	r := c.reply(t, remotev1.GatewayPID(c.node), &eventsv1.ImportSession{Session: "copy", Document: doc})
	if r.GetCreated().GetSession() != "copy" {
		t.Fatalf("import answered %v", r)
	}
	copied := c.reply(t, remotev1.SessionPID(c.node, "copy"), &eventsv1.GetMessages{All: true}).GetMessages().GetMessages()
	if len(copied) != 2 || !proto.Equal(copied[1], doc.GetMessages()[1]) {
		t.Fatalf("the import's messages %v", copied)
	}
	c.reply(t, s, &eventsv1.DeleteSession{})
	if r, _ := c.request(t, remotev1.GatewayPID(c.node), &remotev1.Lookup{Session: "orig"}).(*remotev1.SessionRef); r.GetError().GetCode() != "invalid_session" {
		t.Fatalf("lookup after the delete: %v", r)
	}
}
