package actors

import (
	"fmt"
	"testing"
	"time"

	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/store/memory"
)

// TestPassivationTriesAgainAfterARefusedLeave: a quiet session whose
// place does not let it go (it is not registered there yet, as while its
// restore finishes) tries again a quiet period later. It gave up for
// good after the first refusal, and stayed loaded.
func TestPassivationTriesAgainAfterARefusedLeave(t *testing.T) {
	env := &Env{Settings: Settings{PassivateAfter: 2 * time.Millisecond}, Park: memory.New()}
	sys := newSystem(t)
	place := newPlace(sys, env, nil)
	// No subscriber: an in-process one would keep the session loaded.
	if _, err := place.Spawn(Spec{ID: "s1", Model: scriptModel(t, "", `{"turns":[{"text":"hi"}]}`)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { place.Close("s1") })
	eventually.Within(t, 10*time.Second, func() error {
		if n := place.leaves.Load(); n < 3 {
			return fmt.Errorf("asked its place to let it go %d times", n)
		}
		return nil
	})
}
