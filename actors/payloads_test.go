package actors

import "testing"

// TestSessionCreatedIsShared: the sessions on one model tell
// session_created with one payload, read-only once published; another
// model has its own.
func TestSessionCreatedIsShared(t *testing.T) {
	a, b := newHarness(t, `{"turns":[{"text":"a"}]}`, nil), newHarness(t, `{"turns":[{"text":"b"}]}`, nil)
	pa, pb := a.rec.Events()[0].GetSessionCreated(), b.rec.Events()[0].GetSessionCreated()
	if pa == nil || pa != pb {
		t.Fatalf("session_created payloads %p and %p: want one, shared", pa, pb)
	}
	if other := sessionCreated("script:other"); other == pa || other.GetModel() != "script:other" {
		t.Fatalf("another model's payload %v", other)
	}
}
