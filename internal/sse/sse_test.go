package sse

import (
	"net/http/httptest"
	"testing"
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
