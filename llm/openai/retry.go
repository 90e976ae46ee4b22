package openai

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// retryPlan counts the retries of one Stream call.
type retryPlan struct {
	// attempts numbers the retries so far, stall retries included.
	attempts int
	// retries counts those of retryable failures, against maxRetries.
	retries int
	// stallRetried is set once the one retry after a stall is spent.
	stallRetried bool
}

// next decides whether failure f is retried and after how long. started
// tells whether output went out, after which nothing is retried. When f
// is not retried its error may get a note saying why.
func (p *Provider) next(plan *retryPlan, f *failure, started bool) (time.Duration, bool) {
	switch {
	case started:
		return 0, false
	case f.stalled:
		if plan.stallRetried {
			return 0, false
		}
		plan.stallRetried = true
		plan.attempts++
		return 0, true
	case !f.retryable:
		return 0, false
	case plan.retries >= p.maxRetries:
		if plan.retries > 0 {
			f.err.Message += fmt.Sprintf(" (gave up after %d retries)", plan.retries)
		}
		return 0, false
	}
	delay := p.backoff(plan.retries + 1)
	if f.hasRetryAfter {
		if f.retryAfter > MaxRetryAfter {
			f.err.Message += fmt.Sprintf(" (the server asks to wait %v; not retried)", f.retryAfter)
			return 0, false
		}
		delay = f.retryAfter
	}
	plan.retries++
	plan.attempts++
	return delay, true
}

// backoff returns the wait before retry n (1 for the first): the base
// doubled n-1 times, capped at the maximum.
func (p *Provider) backoff(n int) time.Duration {
	d := float64(p.backoffBase) * math.Pow(2, float64(n-1))
	if d > float64(p.backoffMax) {
		return p.backoffMax
	}
	return time.Duration(d)
}

// retryAfter reads the wait a server asks for: retry-after-ms (OpenAI's,
// in milliseconds), else Retry-After in seconds or as an HTTP date
// (relative to now). ok is false when neither header is usable.
func retryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && !math.IsInf(ms, 0) {
			return durationOf(ms, time.Millisecond), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || math.IsInf(s, 0) || math.IsNaN(s) {
			return 0, false
		}
		return durationOf(s, time.Second), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// durationOf returns n units, saturating instead of overflowing.
func durationOf(n float64, unit time.Duration) time.Duration {
	if d := n * float64(unit); d < math.MaxInt64 {
		return time.Duration(d)
	}
	return math.MaxInt64
}
