package openai

import (
	"cmp"
	"crypto/rand"
	"encoding/json"
	"slices"
	"strings"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
)

// callBuilder accumulates one streamed tool call.
type callBuilder struct {
	// index is the call's index as the server gave it, -1 when it gave
	// none (llama.cpp sends none, or -1).
	index    int64
	id, name string
	args     strings.Builder
}

// calls assembles streamed tool call deltas into calls. OpenAI sends the
// id and name in a call's first delta and then argument pieces under the
// same index. Other servers differ, and calls copes:
//
//   - a delta with an index belongs to the call at that index, unless it
//     carries another id than that call: then it belongs to the call with
//     its id, or starts a new one (gateways that number every call 0);
//   - a delta without a usable index (missing or -1, as llama.cpp sends)
//     belongs to the call with its id, or starts a new one when its id is
//     new; without an id either, it continues the last call, unless it
//     names a function while the last call's arguments are already
//     complete JSON: then it is a new call (Ollama sends each whole call in
//     one delta, older versions without id or index);
//   - a name is taken from the first delta that has one.
type calls struct {
	list    []*callBuilder
	byIndex map[int64]*callBuilder
	byID    map[string]*callBuilder
}

// add applies one tool call delta.
func (cs *calls) add(d *toolCallDelta) {
	index := d.index()
	c := cs.find(d, index)
	if c == nil {
		c = &callBuilder{index: index}
		cs.list = append(cs.list, c)
	}
	if cs.byIndex == nil {
		cs.byIndex, cs.byID = map[int64]*callBuilder{}, map[string]*callBuilder{}
	}
	if d.ID != "" && c.id == "" {
		c.id = d.ID
		cs.byID[d.ID] = c
	}
	if index >= 0 {
		cs.byIndex[index] = c
	}
	if c.name == "" {
		c.name = d.Function.Name
	}
	c.args.WriteString(d.Function.Arguments)
}

// find returns the call delta d continues, nil when it starts a new one.
func (cs *calls) find(d *toolCallDelta, index int64) *callBuilder {
	if index >= 0 {
		c := cs.byIndex[index]
		if c == nil || d.ID == "" || c.id == "" || d.ID == c.id {
			return c
		}
		return cs.byID[d.ID] // another id under a used index
	}
	if d.ID != "" {
		return cs.byID[d.ID]
	}
	if len(cs.list) == 0 {
		return nil
	}
	last := cs.list[len(cs.list)-1]
	if d.Function.Name != "" && last.name != "" && json.Valid([]byte(last.args.String())) {
		return nil
	}
	return last
}

// done returns the finished calls: in index order when the server numbered
// every call distinctly, else in the order they started. A missing id, or
// one an earlier call of the response used, is replaced by a generated
// one; an id the history holds already is the caller's to replace (a
// session does, against its whole history, which a trimmed request does
// not hold: actors/history's Fresh). Empty arguments become {}, and
// arguments that are not valid JSON are kept verbatim for the runtime to
// report to the model.
func (cs *calls) done() []*llm.ToolCall {
	list := slices.Clone(cs.list)
	if distinctIndexes(list) {
		slices.SortStableFunc(list, func(a, b *callBuilder) int { return cmp.Compare(a.index, b.index) })
	}
	used := map[string]bool{}
	out := make([]*llm.ToolCall, 0, len(list))
	for _, c := range list {
		id := c.id
		if id == "" || used[id] {
			id = newCallID()
		}
		used[id] = true
		args := c.args.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		out = append(out, &llm.ToolCall{Id: id, Name: c.name, Args: &eventsv1.RawJSON{Json: []byte(args)}})
	}
	return out
}

// distinctIndexes tells whether every call has its own index.
func distinctIndexes(list []*callBuilder) bool {
	seen := make(map[int64]bool, len(list))
	for _, c := range list {
		if c.index < 0 || seen[c.index] {
			return false
		}
		seen[c.index] = true
	}
	return true
}

// newCallID returns a random tool call id.
func newCallID() string {
	return "call_" + rand.Text()
}
