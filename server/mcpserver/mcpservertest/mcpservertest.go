// Package mcpservertest checks an MCP transport of Tack's agents
// (package mcpserver) with the official MCP Go SDK's client: the same
// checks for stdio, streamable HTTP and in-process connections.
package mcpservertest

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/server/agentrun/agentruntest"
)

// Connect opens a client session with opt (nil for none) to the server
// under test; the test closes it.
type Connect func(t *testing.T, opt *sdk.ClientOptions) *sdk.ClientSession

// Server is the server under test.
type Server struct {
	// Connect connects a client.
	Connect Connect
	// Runtime, when set, is the runtime behind the server, serving the
	// agents of package agentruntest: the checks then also read its
	// sessions (cancellation, the tool results of approvals).
	Runtime *tack.Runtime
	// User is who the server takes the client for (the sessions' owner).
	User string
}

// Run runs every check on srv.
func Run(t *testing.T, srv Server) {
	t.Run("discover", srv.discover)
	t.Run("stream", srv.stream)
	t.Run("approve", func(t *testing.T) { srv.approval(t, "approve", false, agentruntest.GuardedAnswer, "ok") })
	t.Run("reject", func(t *testing.T) { srv.approval(t, "reject", true, "the run ended: rejected", "rejected: not now") })
	t.Run("question", srv.question)
	t.Run("no elicitation", srv.noElicitation)
	t.Run("bad input", srv.badInput)
	if srv.Runtime != nil {
		t.Run("cancel", srv.cancel)
	}
}

// call calls tool with args, with a progress token when progress is set.
func call(t *testing.T, ctx context.Context, cs *sdk.ClientSession, progress bool, tool string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	p := &sdk.CallToolParams{Name: tool, Arguments: args}
	if progress {
		p.SetProgressToken("p-" + tool)
	}
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("CallTool %s: %v", tool, err)
	}
	return res
}

// text is the text of a result's content.
func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// structured is a result's structuredContent as answer and session.
func structured(t *testing.T, res *sdk.CallToolResult) (answer, session string) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Answer, Session string }
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
	return out.Answer, out.Session
}

func (srv Server) discover(t *testing.T) {
	tools := Tools(t, srv.Connect(t, nil))
	if d := tools["ask_hello"]; !strings.HasPrefix(d, "Says hello.") {
		t.Errorf("ask_hello's description: %q", d)
	}
	if names, want := slices.Sorted(maps.Keys(tools)), []string{"ask_curious", "ask_guarded", "ask_hello", "ask_slow"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

// Tools lists the tools cs's server offers its client: their
// descriptions by name.
func Tools(t *testing.T, cs *sdk.ClientSession) map[string]string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl.Description
	}
	return out
}

// progressLog collects progress notification messages.
type progressLog struct {
	mu   sync.Mutex
	msgs []string
	// first is closed at the first notification.
	first chan struct{}
	once  sync.Once
}

func newProgressLog() *progressLog { return &progressLog{first: make(chan struct{})} }

func (l *progressLog) handle(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	l.mu.Lock()
	l.msgs = append(l.msgs, req.Params.Message)
	l.mu.Unlock()
	l.once.Do(func() { close(l.first) })
}

func (l *progressLog) joined() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.msgs, "")
}

// stream: the answer streams as progress notifications whose messages
// make it up, and comes back as text and structured content; passing the
// session back continues it.
func (srv Server) stream(t *testing.T) {
	log := newProgressLog()
	cs := srv.Connect(t, &sdk.ClientOptions{ProgressNotificationHandler: log.handle})
	res := call(t, t.Context(), cs, true, "ask_hello", map[string]any{"prompt": "hi"})
	if res.IsError || text(res) != agentruntest.HelloAnswer {
		t.Fatalf("result %v %q, want %q", res.IsError, text(res), agentruntest.HelloAnswer)
	}
	answer, session := structured(t, res)
	if answer != agentruntest.HelloAnswer || session == "" {
		t.Fatalf("structuredContent answer %q session %q", answer, session)
	}
	// Notifications may trail the result: the SDK sends them apart.
	waitFor(t, func() bool { return log.joined() == agentruntest.HelloAnswer }, func() string { return "progress " + log.joined() })
	res = call(t, t.Context(), cs, false, "ask_hello", map[string]any{"prompt": "again", "session": session})
	if _, again := structured(t, res); again != session || text(res) != agentruntest.HelloAnswer {
		t.Fatalf("continued: session %q (want %q), %q", again, session, text(res))
	}
	if srv.Runtime != nil {
		if n := len(agentruntest.Messages(t, srv.Runtime, session)); n != 4 {
			t.Errorf("the continued session holds %d messages, want 4", n)
		}
	}
}

// elicit answers elicitations with content, recording their messages.
func elicit(msgs *[]string, mu *sync.Mutex, content map[string]any) func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	return func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		mu.Lock()
		*msgs = append(*msgs, req.Params.Message)
		mu.Unlock()
		return &sdk.ElicitResult{Action: "accept", Content: content}, nil
	}
}

// approval: guarded's echo call is put to the client as an elicitation;
// its decision runs the tool (and the answer comes back) or rejects it
// (and the run ends so).
func (srv Server) approval(t *testing.T, decision string, isError bool, answer, toolResult string) {
	var mu sync.Mutex
	var asked []string
	cs := srv.Connect(t, &sdk.ClientOptions{ElicitationHandler: elicit(&asked, &mu, map[string]any{"decision": decision, "reason": "not now"})})
	res := call(t, t.Context(), cs, false, "ask_guarded", map[string]any{"prompt": "echo it"})
	if res.IsError != isError || text(res) != answer {
		t.Fatalf("result %v %q, want %v %q", res.IsError, text(res), isError, answer)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{`The agent guarded wants to run the tool echo with {"text":"ok"}.`}; !slices.Equal(asked, want) {
		t.Errorf("elicited %q, want %q", asked, want)
	}
	srv.toolResult(t, res, toolResult)
}

// toolResult checks the tool result in the session that answered res.
func (srv Server) toolResult(t *testing.T, res *sdk.CallToolResult, want string) {
	t.Helper()
	if srv.Runtime == nil {
		return
	}
	_, id := structured(t, res)
	if got := agentruntest.ToolResult(t, srv.Runtime, id); got != want {
		t.Errorf("tool result %q, want %q", got, want)
	}
}

// question: curious's ask_user question is elicited with its options as
// an enum, and the answer is the tool's result.
func (srv Server) question(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	cs := srv.Connect(t, &sdk.ClientOptions{ElicitationHandler: elicit(&asked, &mu, map[string]any{"response": "blue"})})
	res := call(t, t.Context(), cs, false, "ask_curious", map[string]any{"prompt": "ask me"})
	if res.IsError || text(res) != agentruntest.CuriousAnswer {
		t.Fatalf("result %v %q", res.IsError, text(res))
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{agentruntest.CuriousQuestion}; !slices.Equal(asked, want) {
		t.Errorf("elicited %q, want %q", asked, want)
	}
	srv.toolResult(t, res, "blue")
}

// noElicitation: a client that cannot be asked gets an error result
// naming the approval that waits.
func (srv Server) noElicitation(t *testing.T) {
	cs := srv.Connect(t, nil)
	res := call(t, t.Context(), cs, false, "ask_guarded", map[string]any{"prompt": "echo it"})
	if got := text(res); !res.IsError || !strings.Contains(got, `the agent waits for approval ap-1 of the tool echo (args {"text":"ok"}) and this client cannot be asked (no elicitation)`) {
		t.Fatalf("result %v %q", res.IsError, got)
	}
}

// badInput: an empty prompt and a session that is not the caller's are
// error results.
func (srv Server) badInput(t *testing.T) {
	cs := srv.Connect(t, nil)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"prompt": ""}, `bad_request: "prompt" is empty`},
		{map[string]any{"prompt": "hi", "session": "nobody-has-this"}, `invalid_session: no session "nobody-has-this"`},
	} {
		res := call(t, t.Context(), cs, false, "ask_hello", tc.args)
		if !res.IsError || text(res) != tc.want {
			t.Errorf("%v: %v %q, want %q", tc.args, res.IsError, text(res), tc.want)
		}
	}
}

// cancel: cancelling the call mid-stream aborts the run, agent_abort
// within 100 ms of the cancel.
func (srv Server) cancel(t *testing.T) {
	s, err := srv.Runtime.Spawn(tack.SessionConfig{Agent: "slow", User: srv.User})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.Subscribe(t.Context(), tack.SubscribeOptions{Types: []string{"agent_abort", "agent_end"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	log := newProgressLog()
	cs := srv.Connect(t, &sdk.ClientOptions{ProgressNotificationHandler: log.handle})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		p := &sdk.CallToolParams{Name: "ask_slow", Arguments: map[string]any{"prompt": "go on", "session": s.ID()}}
		p.SetProgressToken("slow")
		_, err := cs.CallTool(ctx, p)
		done <- err
	}()
	select {
	case <-log.first:
	case <-time.After(10 * time.Second):
		t.Fatal("no progress in 10 s")
	}
	cancelled := time.Now()
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled call succeeded")
	}
	var got []string
	for ev := range sub.C {
		switch p := ev.GetPayload().(type) {
		case *eventsv1.Event_AgentAbort:
			if d := time.Unix(0, ev.TsUnixNano).Sub(cancelled); d > 100*time.Millisecond {
				t.Errorf("agent_abort %v after the cancel", d)
			}
			got = append(got, "agent_abort")
		case *eventsv1.Event_AgentEnd:
			got = append(got, "agent_end "+p.AgentEnd.GetReason())
		}
		if len(got) == 2 {
			break
		}
	}
	if want := []string{"agent_abort", "agent_end aborted"}; !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 5 s: %s", what())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
