package openai

import (
	"context"
	"net/http"
	"strings"
	"time"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tack-run/tack/llm"
)

// Provider streams Chat Completions from one OpenAI-compatible server. It
// holds no per-request state, so one Provider may serve many sessions and
// concurrent Stream calls.
type Provider struct {
	baseURL    string
	apiKey     string
	keyEnv     string
	client     *http.Client
	maxRetries int

	backoffBase, backoffMax time.Duration
	stallAfter, stallLimit  time.Duration

	// api sends the requests (openai-go: its options, middleware,
	// transport) and frames the stream; the body is Tack's (request.go).
	api oa.Client

	// now and sleep are the clock of retries; tests replace them.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

// New returns a Provider for the server at baseURL, the URL that
// "/chat/completions" is appended to (such as "https://api.openai.com/v1"
// or "http://127.0.0.1:11434/v1"). The environment is not read: the key
// comes from WithAPIKey only.
func New(baseURL string, opts ...Option) *Provider {
	p := &Provider{
		baseURL:     strings.TrimRight(baseURL, "/"),
		maxRetries:  DefaultMaxRetries,
		backoffBase: DefaultBackoffBase,
		backoffMax:  DefaultBackoffMax,
		stallAfter:  DefaultStallAfter,
		stallLimit:  DefaultStallLimit,
		now:         time.Now,
		sleep:       sleep,
	}
	for _, o := range opts {
		o(p)
	}
	client := p.client
	if client == nil {
		client = http.DefaultClient
	}
	sdk := []option.RequestOption{
		option.WithBaseURL(p.baseURL + "/"),
		option.WithHTTPClient(client),
		// This package retries; the SDK must not retry underneath it.
		option.WithMaxRetries(0),
	}
	if p.apiKey != "" {
		sdk = append(sdk, option.WithAPIKey(p.apiKey))
	}
	// A Client of these options alone: oa.NewClient would add the
	// OPENAI_* variables of the environment, and with them a key this
	// provider was not given.
	p.api = oa.Client{Options: sdk}
	return p
}

// BaseURL returns the server's base URL, without a trailing slash.
func (p *Provider) BaseURL() string { return p.baseURL }

// Stream sends req and streams the response (see the package doc for the
// chunks, retries, stalls and errors). It returns ctx.Err() as soon as ctx
// is cancelled, whatever the request is doing.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, emit func(llm.Chunk)) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	body, lerr := buildBody(req)
	if lerr != nil {
		return nil, lerr
	}
	if names := wireNames(req.Tools); len(names) > 0 {
		inner := emit
		emit = func(c llm.Chunk) {
			if c.ToolCall != nil {
				unwire(c.ToolCall, names)
			}
			inner(c)
		}
	}
	out := &output{emit: emit}
	var plan retryPlan
	for {
		resp, f := p.attempt(ctx, req.Model, body, out)
		if f == nil {
			return resp, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		delay, ok := p.next(&plan, f, out.started)
		if !ok {
			return nil, f.err
		}
		out.emit(llm.Chunk{Kind: llm.ChunkRetry, Attempt: plan.attempts, Delay: delay, Text: f.reason()})
		if err := p.sleep(ctx, delay); err != nil {
			return nil, err
		}
	}
}

// output passes chunks on to the caller's emit and remembers whether any
// output (text or thinking) went out, after which nothing is retried.
type output struct {
	emit    func(llm.Chunk)
	started bool
}

// send emits an output chunk.
func (o *output) send(c llm.Chunk) {
	o.started = true
	o.emit(c)
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
