// Package a2a makes remote Agent2Agent agents tools (docs/a2a.md, "Calling
// remote agents"): the config file's a2a_agents entry "remote" is the tool
// a2a:remote, which sends its task to the agent over A2A with the official
// Go SDK's client (github.com/a2aproject/a2a-go/v2), streams the remote
// progress as tool_execution_update and returns the final answer.
// Cancelling the call (steer, abort) cancels the remote task.
package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/output"
)

// Prefix begins the name of each remote agent's tool.
const Prefix = "a2a:"

// CancelTimeout bounds how long a cancelled call waits for the remote
// server to take the cancel.
const CancelTimeout = 5 * time.Second

// MaxAnswer bounds what a call keeps of a remote agent's answer, and what
// it streams of it as updates: its head and tail, as the shell tool keeps
// a command's output. A remote agent is a third party; one that streams
// without end must not fill the server's memory or the session's history.
const MaxAnswer = output.DefaultLimit

// Agent is one remote agent of the config file's a2a_agents.
type Agent struct {
	// URL is the agent's A2A JSON-RPC endpoint, such as
	// "http://host:7700/a2a/researcher".
	URL string `json:"url"`
	// TokenEnv names the environment variable holding the bearer token
	// sent to the agent; empty sends none.
	TokenEnv string `json:"token_env,omitempty"`
	// Description is the tool's description (default: "Delegate a task to
	// the remote agent <name>.").
	Description string `json:"description,omitempty"`
}

// namePattern is what follows Prefix in a tool's name.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// envName is an environment variable's name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate reports what is wrong with agent name's entry.
func (a Agent) Validate(name string) error {
	var errs []error
	if !namePattern.MatchString(name) {
		errs = append(errs, fmt.Errorf("a2a_agents.%s: the name must be 1 to 32 letters, digits, '_' or '-'", name))
	}
	if u, err := url.Parse(a.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("a2a_agents.%s: \"url\" %q is not an http:// or https:// URL", name, a.URL))
	}
	if a.TokenEnv != "" && !envName.MatchString(a.TokenEnv) {
		errs = append(errs, fmt.Errorf("a2a_agents.%s: \"token_env\" %q is not an environment variable name (give the variable's name, not the token)", name, a.TokenEnv))
	}
	return errors.Join(errs...)
}

// New returns the tool a2a:<name> for agent; getenv reads its token.
func New(name string, agent Agent, getenv func(string) string) (tools.Tool, error) {
	if err := agent.Validate(name); err != nil {
		return nil, err
	}
	desc := agent.Description
	if desc == "" {
		desc = "Delegate a task to the remote agent " + name + "."
	}
	t := &tool{name: Prefix + name, url: agent.URL, desc: desc}
	if agent.TokenEnv != "" {
		t.token = getenv(agent.TokenEnv)
	}
	return t, nil
}

// tool is one remote agent's tool.
type tool struct {
	name, url, desc, token string
}

// schema is the tool's arguments.
var schema = json.RawMessage(`{"type":"object","properties":{"task":{"type":"string","description":"what the remote agent is to do, with all it needs to know"}},"required":["task"],"additionalProperties":false}`)

// Spec describes the tool: killable, its cancel the remote task's.
func (t *tool) Spec() tools.Spec {
	return tools.Spec{Name: t.name, Description: t.desc + " It answers with the agent's final answer; its progress streams meanwhile.", Schema: schema, Kind: tools.Killable}
}

// Bearer is a client interceptor that sends token as
// "Authorization: Bearer <token>" with every call.
func Bearer(token string) a2aclient.CallInterceptor { return bearer{token: token} }

// bearer sends the token with every call.
type bearer struct {
	a2aclient.PassthroughInterceptor
	token string
}

// Before adds the token.
func (b bearer) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	if req.ServiceParams == nil {
		req.ServiceParams = a2aclient.ServiceParams{}
	}
	req.ServiceParams["Authorization"] = []string{"Bearer " + b.token}
	return ctx, nil, nil
}

// Run sends the task, streams the answer's pieces as updates and returns
// the final answer. A remote task that ends other than completed is an
// error result; one that asks for input (an approval, a question) is
// cancelled and an error result says what it asked, since the call has
// nobody to answer it. What the remote agent sends is bounded by
// MaxAnswer: the answer kept, the updates, an error's text.
func (t *tool) Run(ctx context.Context, args json.RawMessage, update func(string)) (string, error) {
	answer, err := t.delegate(ctx, args, output.Updates(MaxAnswer, update))
	return answer, output.CapError(err, MaxAnswer)
}

// delegate does Run's work; Run bounds what it streams and the error it
// returns.
func (t *tool) delegate(ctx context.Context, args json.RawMessage, update func(string)) (string, error) {
	var in struct {
		Task string `json:"task"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return "", err
	}
	var opts []a2aclient.FactoryOption
	if t.token != "" {
		opts = append(opts, a2aclient.WithCallInterceptors(Bearer(t.token)))
	}
	c, err := a2aclient.NewFromEndpoints(ctx, []*sdk.AgentInterface{sdk.NewAgentInterface(t.url, sdk.TransportProtocolJSONRPC)}, opts...)
	if err != nil {
		return "", fmt.Errorf("%s: %w", t.url, err)
	}
	defer c.Destroy()
	var task sdk.TaskID
	answer := output.NewCapped(MaxAnswer)
	var last *sdk.TaskStatus
	req := &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart(in.Task))}
	for ev, err := range c.SendStreamingMessage(ctx, req) {
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return "", fmt.Errorf("%s: %w", t.url, err)
		}
		switch e := ev.(type) {
		case *sdk.Task:
			task, last = e.ID, &e.Status
		case *sdk.TaskStatusUpdateEvent:
			task, last = e.TaskID, &e.Status
		case *sdk.TaskArtifactUpdateEvent:
			task = e.TaskID
			piece := text(e.Artifact.Parts)
			_, _ = answer.Write([]byte(piece))
			update(piece)
		}
	}
	if ctx.Err() != nil {
		t.cancel(c, task)
		return "", ctx.Err()
	}
	if last == nil {
		return "", fmt.Errorf("%s: the stream ended without a task", t.url)
	}
	said := ""
	if last.Message != nil {
		said = output.Cap(text(last.Message.Parts), MaxAnswer)
	}
	switch last.State {
	case sdk.TaskStateCompleted:
		if said != "" {
			return said, nil
		}
		return answer.String(), nil
	case sdk.TaskStateInputRequired, sdk.TaskStateAuthRequired:
		t.cancel(c, task)
		return "", fmt.Errorf("the remote agent asked for input this tool cannot give, so its task was cancelled: %s", said)
	}
	msg := fmt.Sprintf("the remote task ended %s", strings.ToLower(strings.TrimPrefix(string(last.State), "TASK_STATE_")))
	if said != "" {
		msg += ": " + said
	}
	return "", errors.New(msg)
}

// cancel cancels the remote task, if there is one, whatever the call's
// context says.
func (t *tool) cancel(c *a2aclient.Client, task sdk.TaskID) {
	if task == "" {
		return
	}
	ctx, stop := context.WithTimeout(context.Background(), CancelTimeout)
	defer stop()
	_, _ = c.CancelTask(ctx, &sdk.CancelTaskRequest{ID: task})
}

// text is the text of parts.
func text(parts sdk.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		if s, ok := p.Content.(sdk.Text); ok {
			b.WriteString(string(s))
		}
	}
	return b.String()
}
