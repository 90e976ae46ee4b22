// Package mcpserver offers a runtime's agents as Model Context Protocol
// tools (docs/mcp.md, "Tack as an MCP server"): each agent is the tool
// ask_<agent>, which prompts a session of that agent and answers with
// what the agent said. `tack mcp` serves it over stdio, `tack serve` at
// /mcp over streamable HTTP. The protocol is the official Go SDK's
// (github.com/modelcontextprotocol/go-sdk).
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/server/agentrun"
)

// ToolPrefix begins the name of each agent's tool.
const ToolPrefix = "ask_"

// Options configure New.
type Options struct {
	// Agents are the agents offered; nil offers every agent of the
	// runtime.
	Agents []string
	// User is the caller when the transport names nobody: stdio, and
	// HTTP without auth. Over HTTP with auth, the token's user (the SDK's
	// TokenInfo.UserID) is the caller.
	User string
	// AbortTimeout bounds how long a cancelled call waits for its
	// session to take the abort (default 5 s).
	AbortTimeout time.Duration
}

// Input is what ask_<agent> takes.
type Input struct {
	Prompt  string `json:"prompt" jsonschema:"what to ask the agent"`
	Session string `json:"session,omitempty" jsonschema:"a session of this agent to continue (the session of an earlier answer); absent: a new session"`
}

// Output is what ask_<agent> answers (its structuredContent).
type Output struct {
	Answer  string `json:"answer" jsonschema:"the agent's answer"`
	Session string `json:"session" jsonschema:"the session that answered: pass it as session to continue the conversation"`
}

// New returns an MCP server whose tools are the agents of rt that opt
// names (every one by default); an unknown agent is an error.
func New(rt *tack.Runtime, opt Options) (*sdk.Server, error) {
	names := opt.Agents
	if names == nil {
		names = rt.AgentNames()
	}
	if opt.AbortTimeout <= 0 {
		opt.AbortTimeout = 5 * time.Second
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "tack", Version: agentrun.Version()}, nil)
	for _, name := range names {
		a, ok := rt.Agent(name)
		if !ok {
			return nil, fmt.Errorf("mcpserver: no agent %q (agents: %v)", name, rt.AgentNames())
		}
		desc := a.Description
		if desc == "" {
			desc = "Ask the agent " + name + "."
		}
		t := &tool{rt: rt, agent: name, opt: opt}
		sdk.AddTool(srv, &sdk.Tool{Name: ToolPrefix + name, Description: desc + " The answer streams as progress notifications; cancelling the call stops the agent."}, t.call)
	}
	srv.AddReceivingMiddleware(ownTools(rt, opt.User))
	return srv, nil
}

// ownTools has tools/list answer each caller with the tools of the agents
// its grant lets it use, as GET /v1/catalog lists them: another user's
// agents are not the caller's to read about (their calls are refused
// forbidden anyway). fallback is the caller when the request names none.
func ownTools(rt *tack.Runtime, fallback string) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			list, ok := res.(*sdk.ListToolsResult)
			if !ok || err != nil {
				return res, err
			}
			user := caller(req.GetExtra(), fallback)
			own := []*sdk.Tool{}
			for _, tl := range list.Tools {
				if rt.MayUseAgent(user, strings.TrimPrefix(tl.Name, ToolPrefix)) {
					own = append(own, tl)
				}
			}
			out := *list
			out.Tools = own
			return &out, nil
		}
	}
}

// caller is the user a request carries, or fallback (Options.User).
func caller(extra *sdk.RequestExtra, fallback string) string {
	if extra != nil && extra.TokenInfo != nil {
		return extra.TokenInfo.UserID
	}
	return fallback
}

// SessionTimeout is how long an MCP session over HTTP lives without a
// request.
const SessionTimeout = 30 * time.Minute

// Handler serves srv over streamable HTTP (stateful), behind the
// caller's own authentication: with authenticated, each request's user
// (user(r)) is the TokenInfo the tools see, and a session of the MCP
// protocol stays its user's.
func Handler(srv *sdk.Server, authenticated bool, user func(*http.Request) string) http.Handler {
	h := http.Handler(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{SessionTimeout: SessionTimeout}))
	if authenticated {
		// The caller's middleware has checked the token: the SDK's only
		// puts its user where the transport looks for it.
		verify := func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
			return &auth.TokenInfo{UserID: user(r), Expiration: time.Now().Add(time.Hour)}, nil
		}
		h = auth.RequireBearerToken(verify, nil)(h)
	}
	return h
}

// tool is one agent's tool.
type tool struct {
	rt    *tack.Runtime
	agent string
	opt   Options
}

// user is the caller of req.
func (t *tool) user(req *sdk.CallToolRequest) string { return caller(req.Extra, t.opt.User) }

// session is the session a call continues, or a new one of the agent.
// Another user's session, and a session of another agent (or of none),
// are refused as a session that does not exist is.
func (t *tool) session(ctx context.Context, user, id string) (*tack.Session, error) {
	if id == "" {
		return t.rt.Spawn(tack.SessionConfig{Agent: t.agent, User: user})
	}
	s, err := agentrun.Continue(ctx, t.rt, id, user, t.agent)
	if errors.Is(err, agentrun.ErrNotTheirs) {
		err = &tack.Error{Code: events.CodeInvalidSession, Message: fmt.Sprintf("no session %q", id)}
	}
	return s, err
}

// call prompts the session and follows its run to its end, or to an
// approval or question, which goes back to the client as an elicitation
// (an input request of the multi round-trip pattern, SEP-2322: the
// SDK elicits from older clients itself). The client's retry carries the
// answer and the state naming what it answers: call answers it and
// follows the run on.
func (t *tool) call(ctx context.Context, req *sdk.CallToolRequest, in Input) (*sdk.CallToolResult, Output, error) {
	user := t.user(req)
	var s *tack.Session
	var f *agentrun.Follower
	var err error
	if req.Params.RequestState != "" {
		s, f, err = t.resume(ctx, user, req)
	} else if in.Prompt == "" {
		err = errors.New(`bad_request: "prompt" is empty`)
	} else if s, err = t.session(ctx, user, in.Session); err == nil {
		f, err = agentrun.Prompt(ctx, s, in.Prompt)
	}
	if err != nil {
		return nil, Output{}, err
	}
	defer f.Close()
	token := req.Params.GetProgressToken()
	var progress float64
	for {
		step, err := f.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				t.abort(ctx, s)
			}
			return nil, Output{}, err
		}
		switch step.Kind {
		case agentrun.Delta:
			if token != nil {
				progress += float64(len(step.Text))
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: progress, Message: step.Text})
			}
		case agentrun.Approval, agentrun.Question:
			res, err := t.ask(req, s, step)
			return res, Output{}, err
		case agentrun.End:
			out := Output{Answer: step.Text, Session: s.ID()}
			res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: step.Text}}}
			if step.Reason != "completed" {
				res.IsError = true
				text := "the run ended: " + step.Reason
				if step.Error != "" {
					text += ": " + step.Error
				}
				if step.Text != "" {
					text += "\n\n" + step.Text
				}
				res.Content = []sdk.Content{&sdk.TextContent{Text: text}}
			}
			return res, out, nil
		}
	}
}

// abort stops the session's run after the call, whose context call is,
// was cancelled: sent for the call's user, as the call's commands are.
func (t *tool) abort(call context.Context, s *tack.Session) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(call), t.opt.AbortTimeout)
	defer cancel()
	_ = s.Abort(ctx, tack.AbortOptions{KillTools: events.KillKillable})
}

// inputKey names the one input request of a waiting call.
const inputKey = "tack"

// waiting is what a call's RequestState says waits: an approval (ID is
// its approval_id) or a question (ID is its ref) of a session.
type waiting struct {
	Session  string `json:"session"`
	Approval string `json:"approval_id,omitempty"`
	Ref      string `json:"ref,omitempty"`
}

// ask returns the input request that puts a pending approval or question
// to the client's user. A client that cannot elicit gets an error naming
// what waits: the session keeps waiting, to be answered over HTTP
// (approve, reject, respond).
func (t *tool) ask(req *sdk.CallToolRequest, s *tack.Session, step agentrun.Step) (*sdk.CallToolResult, error) {
	a, q := step.Approval, step.Question
	if caps := req.Session.InitializeParams().Capabilities; caps == nil || caps.Elicitation == nil {
		if a != nil {
			return nil, fmt.Errorf("the agent waits for approval %s of the tool %s (args %s) and this client cannot be asked (no elicitation); session %s", a.GetApprovalId(), a.GetTool(), a.GetArgs().GetJson(), s.ID())
		}
		return nil, fmt.Errorf("the agent asks %q (ref %s) and this client cannot be asked (no elicitation); session %s", q.GetQuestion(), q.GetRef(), s.ID())
	}
	w := waiting{Session: s.ID()}
	var params *sdk.ElicitParams
	if a != nil {
		w.Approval = a.GetApprovalId()
		msg := fmt.Sprintf("The agent %s wants to run the tool %s with %s.", t.agent, a.GetTool(), a.GetArgs().GetJson())
		params = &sdk.ElicitParams{Message: msg, RequestedSchema: approvalSchema}
	} else {
		w.Ref = q.GetRef()
		response := map[string]any{"type": "string", "description": "the answer"}
		if len(q.GetOptions()) > 0 {
			response["enum"] = q.GetOptions()
		}
		params = &sdk.ElicitParams{Message: q.GetQuestion(), RequestedSchema: map[string]any{"type": "object",
			"properties": map[string]any{"response": response}, "required": []string{"response"}}}
	}
	state, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{inputKey: params}, RequestState: string(state)}, nil
}

// resume answers what a retried call's state says waits with the
// client's elicitation result, and follows the run on.
func (t *tool) resume(ctx context.Context, user string, req *sdk.CallToolRequest) (*tack.Session, *agentrun.Follower, error) {
	var w waiting
	if err := json.Unmarshal([]byte(req.Params.RequestState), &w); err != nil || w.Session == "" {
		return nil, nil, errors.New("bad_request: requestState is not one this server gave")
	}
	res, _ := req.Params.InputResponses[inputKey].(*sdk.ElicitResult)
	if res == nil {
		return nil, nil, fmt.Errorf("bad_request: inputResponses has no elicitation result %q", inputKey)
	}
	s, err := t.session(ctx, user, w.Session)
	if err != nil {
		return nil, nil, err
	}
	f, err := agentrun.Follow(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	str := func(key string) string { v, _ := res.Content[key].(string); return v }
	switch {
	case w.Approval != "" && res.Action == "accept" && str("decision") == "approve":
		err = s.Approve(ctx, w.Approval, false)
	case w.Approval != "":
		reason := str("reason")
		if reason == "" {
			reason = "declined by the MCP client"
		}
		err = s.Reject(ctx, w.Approval, reason)
	case res.Action == "accept":
		err = s.Respond(ctx, w.Ref, str("response"))
	default:
		err = s.Respond(ctx, w.Ref, "(the user declined to answer)")
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return s, f, nil
}

// approvalSchema is the form an approval is elicited with.
var approvalSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"decision":{"type":"string","enum":["approve","reject"],"description":"run the tool, or not"},` +
	`"reason":{"type":"string","description":"why not (with reject)"}},"required":["decision"]}`)
