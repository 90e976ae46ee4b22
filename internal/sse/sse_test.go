package sse

import (
	"net/http/httptest"
	"testing"
	"time"
)

func TestWriter(t *testing.T) {
	rec := httptest.NewRecorder()
	w, err := Start(rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Event("14", "message_delta", []byte(`{"delta":"hi"}`))
	w.Event("", "events_lost", []byte(`{"from":1}`))
	w.Event("", "", []byte("two\r\nlines"))
	w.Comment("keepalive")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "id: 14\nevent: message_delta\ndata: {\"delta\":\"hi\"}\n\n" +
		"event: events_lost\ndata: {\"from\":1}\n\n" +
		"data: two\ndata: lines\n\n" +
		": keepalive\n\n"
	if got := rec.Body.String(); got != want {
		t.Fatalf("stream:\n%q\nwant\n%q", got, want)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" || !rec.Flushed || rec.Code != 200 {
		t.Fatalf("content type %q, flushed %v, status %d", ct, rec.Flushed, rec.Code)
	}
}

// deadlines is a recorder that keeps the write deadlines set on it.
type deadlines struct {
	*httptest.ResponseRecorder
	set []time.Time
}

func (d *deadlines) SetWriteDeadline(t time.Time) error {
	d.set = append(d.set, t)
	return nil
}

// TestFlushDeadline: each Flush has between three quarters of the write
// timeout and all of it, and the deadline moves only when less than that
// is left — including after a quiet spell longer than the timeout, when
// the deadline set before has passed.
func TestFlushDeadline(t *testing.T) {
	rec := &deadlines{ResponseRecorder: httptest.NewRecorder()}
	w, err := Start(rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	now := t0
	w.timeout, w.now = 40*time.Second, func() time.Time { return now }
	rec.set = nil
	for _, step := range []struct {
		after time.Duration // since t0
		want  time.Time     // the deadline set by this flush; zero: none
	}{
		{0, t0.Add(40 * time.Second)},
		{5 * time.Second, time.Time{}},                            // 35 s left
		{10 * time.Second, time.Time{}},                           // 30 s left: three quarters
		{11 * time.Second, t0.Add(51 * time.Second)},              // 29 s left
		{20 * time.Second, time.Time{}},                           // 31 s left
		{5 * time.Minute, t0.Add(5*time.Minute + 40*time.Second)}, // quiet: the deadline had passed
	} {
		now = t0.Add(step.after)
		rec.set = nil
		w.Event("1", "message_delta", []byte(`{}`))
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		var got time.Time
		if len(rec.set) > 1 {
			t.Fatalf("at %v: deadlines %v, want at most one", step.after, rec.set)
		}
		if len(rec.set) == 1 {
			got = rec.set[0]
		}
		if !got.Equal(step.want) {
			t.Fatalf("at %v: deadline set %v, want %v", step.after, got, step.want)
		}
	}
}
