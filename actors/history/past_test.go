package history

import (
	"reflect"
	"testing"

	"github.com/tack-run/tack/llm"
)

// TestPastOnlyWhenNeeded: a history that only commits, is written and
// reverts keeps no past, and one that rolls back and compacts gets one
// of its own; the shared empty past stays empty throughout.
func TestPastOnlyWhenNeeded(t *testing.T) {
	msg := func(role, text string) *llm.Message { return &llm.Message{Role: role, Content: text} }
	var plain, changed History
	for _, h := range []*History{&plain, &changed} {
		h.Commit(msg(llm.RoleUser, "one"))
		h.Commit(msg(llm.RoleAssistant, "two"))
		h.Stored(h.Pending(false))
		h.Commit(msg(llm.RoleUser, "three"))
	}
	plain.Revert()
	plain.Whole()
	plain.All()
	plain.CallsOutside()
	changed.RollBack(2)
	changed.Compact(1, msg(llm.RoleUser, "summary"))
	changed.Stored(changed.Pending(false))
	if plain.past != nil {
		t.Errorf("a history with neither rollback nor compaction has a past: %+v", *plain.past)
	}
	if changed.past == nil || changed.past.base != 1 || changed.past.rollbacks != 1 {
		t.Errorf("after a rollback and a compaction, past = %+v", changed.past)
	}
	if !reflect.DeepEqual(noPast, past{}) {
		t.Errorf("the shared empty past was changed: %+v", noPast)
	}
	if r := Restore([]*llm.Message{msg(llm.RoleUser, "a")}, 0); r.past != nil {
		t.Errorf("a restored history with nothing archived or rolled back has a past: %+v", *r.past)
	}
}
