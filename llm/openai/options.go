package openai

import (
	"net/http"
	"time"
)

// Defaults of a Provider, each changed by an Option.
const (
	// DefaultMaxRetries is how many times a failed request is retried.
	DefaultMaxRetries = 4
	// DefaultBackoffBase is the wait before the first retry; each later
	// retry waits twice as long as the one before, up to DefaultBackoffMax.
	DefaultBackoffBase = time.Second
	// DefaultBackoffMax caps the exponential backoff.
	DefaultBackoffMax = 30 * time.Second
	// DefaultStallAfter is the silence after which ChunkStalled is emitted,
	// and again after each further such silence.
	DefaultStallAfter = 30 * time.Second
	// DefaultStallLimit is the silence after which the request is cancelled
	// (and retried once when nothing was output yet).
	DefaultStallLimit = 120 * time.Second
	// MaxRetryAfter is the longest Retry-After a Provider waits for; a server
	// that asks for a longer wait gets its error returned at once.
	MaxRetryAfter = 2 * time.Minute
)

// Option configures a Provider.
type Option func(*Provider)

// WithAPIKey sets the key sent as "Authorization: Bearer <key>". Without
// it (or with ""), no Authorization header is sent, which is what local
// servers such as Ollama and llama.cpp expect.
func WithAPIKey(key string) Option {
	return func(p *Provider) { p.apiKey = key }
}

// WithAPIKeyEnv names the environment variable the key came from, so that
// the error for a refused key can tell the user which one to fix.
func WithAPIKeyEnv(name string) Option {
	return func(p *Provider) { p.keyEnv = name }
}

// WithHTTPClient sets the HTTP client; nil means http.DefaultClient. Share
// one client among Providers to share its connections.
func WithHTTPClient(c *http.Client) Option {
	return func(p *Provider) { p.client = c }
}

// WithRetries sets how many times a retryable failure is retried
// (DefaultMaxRetries); 0 or less disables retries. The one retry after a
// stall (see WithStall) is not counted here.
func WithRetries(n int) Option {
	return func(p *Provider) { p.maxRetries = max(n, 0) }
}

// WithBackoff sets the wait before the first retry and the cap of the
// doubling waits after it (DefaultBackoffBase, DefaultBackoffMax). A
// Retry-After or retry-after-ms header from the server overrides it.
func WithBackoff(base, maxWait time.Duration) Option {
	return func(p *Provider) {
		p.backoffBase, p.backoffMax = max(base, 0), max(maxWait, 0)
	}
}

// WithStall sets the stall timers (DefaultStallAfter, DefaultStallLimit):
// after each silence of after, ChunkStalled is emitted; after a silence of
// limit the request is cancelled. 0 or less disables either.
func WithStall(after, limit time.Duration) Option {
	return func(p *Provider) { p.stallAfter, p.stallLimit = after, limit }
}
