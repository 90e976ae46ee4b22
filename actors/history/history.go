// Package history is a session's conversation as a plain value: the
// working history a model is sent, the archive compaction took out of it,
// the spans rollbacks took out, and how much of all that the store holds.
// The session actor changes it (Commit, RollBack, Compact) and asks it
// what a write must carry (Pending) and where a failed write leaves it
// (Revert); nothing here does I/O or knows of actors.
//
// # The store's order
//
// The store keeps every message ever committed, in order: the archive
// (indices before Base, marked compacted when read back), then the
// working history with each rolled-back span in its place (RolledBack set
// in the message itself). A compaction or a rollback rewrites that order
// from Base in one write, so a crash leaves the history either before or
// after it.
package history

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/llm"
)

// History is a session's conversation. Its zero value is an empty history
// the store holds nothing of. The slices it returns are its own: read
// them, never change them.
type History struct {
	msgs []*llm.Message // the working history
	// past is what compactions and rollbacks took out of it: nil until
	// the first of them, which most sessions never have, so that every
	// live session is 64 bytes smaller (docs/benchmarks.md, finding 21).
	// Read it with earlier, change it through changing.
	past *past
	// checked is how much of msgs the repair pass has found valid.
	checked int
	// stored is what the store holds.
	stored mark
	// ids counts each tool call id of every message ever committed, the
	// past's included: nil until a call first needs it (callIDs), then
	// kept by Commit, so that a new call's id is checked in constant
	// time at any length of history.
	ids map[string]int32
}

// past is what compactions and rollbacks took out of a working history.
type past struct {
	// archive holds the messages compaction took out, in order; base is
	// their number, the store index the working history starts at.
	archive []*llm.Message
	base    int
	// archivedCalls counts the tool calls of the archive.
	archivedCalls int
	// rolled are the messages rollbacks took out since base, in their
	// places; rollbacks counts the rollbacks.
	rolled    []span
	rollbacks uint64
	// before is the working history as the store holds it, kept while a
	// compaction or a rollback it does not hold yet waits: what Revert
	// goes back to.
	before *rewind
	// floor, when lowered, is the lowest base since the store last held
	// the whole history: a rollback to before a compaction (RollBackTo)
	// moved the base back, and a compaction may have moved it on since;
	// the next rewrite starts there all the same, or what the store
	// holds between would keep its old marks.
	floor   int
	lowered bool
}

// noPast is the past of a history that has none. Nothing changes it:
// changes go through changing.
var noPast past

// earlier is h's past, to read.
func (h *History) earlier() *past {
	if h.past == nil {
		return &noPast
	}
	return h.past
}

// changing is h's past, to change.
func (h *History) changing() *past {
	if h.past == nil {
		h.past = new(past)
	}
	return h.past
}

// span is messages a rollback took out, sitting before working-history
// index at.
type span struct {
	at   int
	msgs []*llm.Message
}

// mark is what the store holds of a history (and past.before, the
// working history it holds while a rewrite waits).
type mark struct {
	count     int // messages of the working history stored
	base      int
	rollbacks uint64
}

// rewind is a working history, its spans and the archive before it.
type rewind struct {
	msgs    []*llm.Message
	rolled  []span
	archive []*llm.Message
}

// Restore is the history the store holds: msgs in the store's order,
// the working history starting at start.
func Restore(msgs []*llm.Message, start int) History {
	start = min(start, len(msgs))
	var h History
	var rolled []span
	h.msgs, rolled = splitRolled(msgs[start:])
	if start > 0 || rolled != nil {
		archive := slices.Clip(msgs[:start])
		h.past = &past{archive: archive, base: start, archivedCalls: CountCalls(archive), rolled: rolled}
	}
	h.stored = mark{count: len(h.msgs), base: start}
	return h
}

// Messages is the working history.
func (h *History) Messages() []*llm.Message { return h.msgs }

// Len is the length of the working history.
func (h *History) Len() int { return len(h.msgs) }

// Commit appends m to the working history and returns its index. The ids
// of m's tool calls should be free (Fresh).
func (h *History) Commit(m *llm.Message) int {
	h.msgs = append(h.msgs, m)
	if h.ids != nil {
		countIDs(h.ids, m)
	}
	return len(h.msgs) - 1
}

// Fresh returns m with each tool call id that the history holds already
// (its archive and rolled-back spans too), that an earlier call of m
// gives, that is empty, or that is longer than a provider takes
// (maxCallID, cut then), replaced by a free one: the id with "-2",
// "-3", … appended, the first that is free ("call-2", … for an empty
// one). Models do reuse ids — a server that numbers the calls of each
// response from call_0, a model whose request was trimmed of the call it
// first gave the id to — and a provider refuses a history that holds one
// id twice. It returns m itself when every id is free; m is not changed.
func (h *History) Fresh(m *llm.Message) *llm.Message {
	out := m
	for i, c := range m.ToolCalls {
		taken := h.takenWith(out.ToolCalls[:i])
		if len(c.Id) <= maxCallID && !taken(c.Id) {
			continue
		}
		if out == m {
			out = proto.Clone(m).(*llm.Message)
		}
		out.ToolCalls[i].Id = freeID(c.Id, taken)
	}
	return out
}

// takenWith reports whether an id is taken: empty, held by the history,
// or given by one of calls.
func (h *History) takenWith(calls []*llm.ToolCall) func(string) bool {
	ids := h.callIDs()
	return func(id string) bool {
		return id == "" || ids[id] > 0 || slices.ContainsFunc(calls, func(c *llm.ToolCall) bool { return c.Id == id })
	}
}

// maxCallID is the longest tool call id every provider takes: OpenAI
// refuses a tool_call_id past 40 characters, and other servers give
// longer ones (vLLM's are 46), which a session that switches models
// would send it.
const maxCallID = 40

// freeID is a free id in place of id: id cut to 32 bytes when it is
// longer than maxCallID and that is free, else id (cut so that the
// suffix fits maxCallID) with the first "-N" from 2 on that taken does
// not hold.
func freeID(id string, taken func(string) bool) string {
	base := cmp.Or(id, "call")
	if len(base) > maxCallID-8 {
		base = strings.ToValidUTF8(base[:maxCallID-8], "")
		if len(id) > maxCallID && !taken(base) {
			return base
		}
	}
	base += "-"
	for n := 2; ; n++ {
		if c := base + strconv.Itoa(n); !taken(c) {
			return c
		}
	}
}

// callIDs is ids, counted first if need be.
func (h *History) callIDs() map[string]int32 {
	if h.ids == nil {
		h.ids = map[string]int32{}
		p := h.earlier()
		for _, m := range p.archive {
			countIDs(h.ids, m)
		}
		for _, sp := range p.rolled {
			for _, m := range sp.msgs {
				countIDs(h.ids, m)
			}
		}
		for _, m := range h.msgs {
			countIDs(h.ids, m)
		}
	}
	return h.ids
}

// countIDs adds the tool call ids of m to ids.
func countIDs(ids map[string]int32, m *llm.Message) {
	for _, c := range m.ToolCalls {
		ids[c.Id]++
	}
}

// repeats reports whether a tool call of msgs has an id that the history
// holds more than once.
func (h *History) repeats(msgs []*llm.Message) bool {
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if h.callIDs()[c.Id] > 1 {
				return true
			}
		}
	}
	return false
}

// Fork makes msgs the working history of a new session (a fork's copy).
func (h *History) Fork(msgs []*llm.Message) { h.msgs, h.ids = slices.Clone(msgs), nil }

// RollBack takes the working history from index from on out: the
// messages stay, marked rolled back, in the store's order. It reports
// whether it took anything.
func (h *History) RollBack(from int) bool {
	from = max(from, 0)
	if from >= len(h.msgs) {
		return false
	}
	h.keepBefore()
	out := make([]*llm.Message, len(h.msgs)-from)
	for i, m := range h.msgs[from:] {
		c := proto.Clone(m).(*llm.Message)
		c.RolledBack = true
		out[i] = c
	}
	p := h.changing()
	p.rolled = append(p.rolled, span{at: from, msgs: out})
	p.rollbacks++
	h.msgs = slices.Clip(h.msgs[:from])
	h.checked = min(h.checked, from)
	return true
}

// A Point is a place in the working history that outlives compactions:
// index at of the working history while the archive held base messages.
// RollBackTo goes back to it.
type Point struct{ base, at int }

// Point is index at of the working history as it is now.
func (h *History) Point(at int) Point { return Point{base: h.earlier().base, at: at} }

// RollBackTo takes the working history from pt on out, as RollBack does,
// also what compactions since pt archived of it: the messages before pt
// come back from the archive into the working history as they were, and
// everything after them — the summaries that stood for them too — is
// taken out, marked rolled back, in the store's order. A rollback of a
// run that a compaction reached back into leaves no summary of the run
// behind. It reports whether it took anything.
func (h *History) RollBackTo(pt Point) bool {
	if pt.base >= h.earlier().base {
		return h.RollBack(pt.at)
	}
	h.keepBefore()
	p := h.changing()
	seq := append(slices.Clone(p.archive[pt.base:]), h.storedView()...)
	k := 0 // where the messages from pt on start in seq
	for n := 0; k < len(seq) && (n < pt.at || seq[k].RolledBack); k++ {
		if !seq[k].RolledBack {
			n++
		}
	}
	msgs, rolled := splitRolled(seq[:k])
	out := make([]*llm.Message, len(seq)-k)
	for i, m := range seq[k:] {
		c := proto.Clone(m).(*llm.Message)
		c.RolledBack = true
		out[i] = c
	}
	p.rolled = append(rolled, span{at: len(msgs), msgs: out})
	p.rollbacks++
	p.archive = slices.Clip(p.archive[:pt.base])
	p.base, p.archivedCalls = pt.base, CountCalls(p.archive)
	if !p.lowered || pt.base < p.floor {
		p.floor, p.lowered = pt.base, true
	}
	h.msgs, h.checked = slices.Clip(msgs), 0
	return true
}

// CompactCut is how many of the oldest messages a compaction that keeps
// the newest keep replaces, moved back to a turn boundary (the first
// message kept is never a tool result); 0 means nothing to compact.
func (h *History) CompactCut(keep int) int {
	cut := len(h.msgs) - keep
	for cut > 0 && h.msgs[min(cut, len(h.msgs)-1)].Role == llm.RoleTool && cut < len(h.msgs) {
		cut--
	}
	if cut == 1 && h.msgs[0].Summary {
		return 0 // only the summary of the last compaction
	}
	return max(cut, 0)
}

// Compact replaces the working history's first cut messages with
// summary; they move to the archive, with the rolled-back spans among
// them. A working-history index past cut moves by 1-cut.
func (h *History) Compact(cut int, summary *llm.Message) {
	h.keepBefore()
	p := h.changing()
	var in, kept []span
	for _, sp := range p.rolled {
		if sp.at <= cut {
			in = append(in, sp)
		} else {
			kept = append(kept, span{at: sp.at - cut + 1, msgs: sp.msgs})
		}
	}
	archived := interleave(h.msgs[:cut], in)
	p.rolled = kept
	p.archive = append(p.archive, archived...)
	p.archivedCalls += CountCalls(archived)
	p.base += len(archived)
	h.msgs = append([]*llm.Message{summary}, h.msgs[cut:]...)
	h.checked = 0
}

// keepBefore records the working history as the store holds it before a
// change that rewrites it, unless one such change is already unsaved
// (then the record is older still, and right).
func (h *History) keepBefore() {
	if h.rewritePending() {
		return
	}
	h.changing().before = h.rewind()
}

// rewind is the history as it is now, to go back to.
func (h *History) rewind() *rewind {
	p := h.earlier()
	return &rewind{msgs: h.msgs, rolled: slices.Clone(p.rolled), archive: p.archive}
}

// rewritePending reports whether the store has yet to take a compaction
// or a rollback.
func (h *History) rewritePending() bool {
	p := h.earlier()
	return p.base != h.stored.base || p.rollbacks != h.stored.rollbacks
}

// All is every message ever committed, in the store's order: the
// archive, marked compacted, then the working history with what
// rollbacks took out in its places, marked rolled back.
func (h *History) All() []*llm.Message {
	archive := h.earlier().archive
	out := make([]*llm.Message, 0, len(archive)+len(h.msgs)+h.rolledCount())
	for _, m := range archive {
		c := proto.Clone(m).(*llm.Message)
		c.Compacted = true
		out = append(out, c)
	}
	return append(out, h.storedView()...)
}

// Whole is every message in the store's order and the working history's
// start in it, unmarked: what Restore takes back, for a session written
// whole at once (a parked one).
func (h *History) Whole() ([]*llm.Message, int) {
	p := h.earlier()
	return append(slices.Clip(p.archive), h.storedView()...), p.base
}

// storedView is the messages from base on in the store's order.
func (h *History) storedView() []*llm.Message { return interleave(h.msgs, h.earlier().rolled) }

// rolledCount is the number of rolled-back messages from base on.
func (h *History) rolledCount() int {
	n := 0
	for _, sp := range h.earlier().rolled {
		n += len(sp.msgs)
	}
	return n
}

// CallsOutside counts the tool calls of the session that are not in the
// working history: those compaction archived and those rollbacks took
// out. A model that numbers its call ids after every call of the session
// never gives an id twice.
func (h *History) CallsOutside() int {
	p := h.earlier()
	n := p.archivedCalls
	for _, sp := range p.rolled {
		n += CountCalls(sp.msgs)
	}
	return n
}

// Repaired is the working history as a request sends it, repaired if it
// ever needs to be (it should not: the repair is defence in depth), and
// the fixes made. The history only grows, and at each request every tool
// call in it has its result, so the pass checks what was added since the
// last request that needed no fix — all of it when a call added gives an
// id the history holds twice, which the part checked before may hold; a
// prefix that needed fixing stays unchecked, so it is fixed again on
// every request.
func (h *History) Repaired() ([]*llm.Message, []string) {
	from := h.checked
	if h.repeats(h.msgs[from:]) {
		from = 0
	}
	tail, fixes := llm.Repair(h.msgs[from:])
	if len(fixes) == 0 {
		h.checked = len(h.msgs)
		return h.msgs, nil
	}
	return append(slices.Clone(h.msgs[:from]), tail...), fixes
}

// Write is what a write must carry of the history: Messages, stored from
// store index From on; with Rewrite they replace everything from From,
// and the working history starts at Start.
type Write struct {
	From     int
	Messages []*llm.Message
	Rewrite  bool
	Start    int
	// mark is the history's state as the write started (Stored takes it);
	// state is that history, for a rewrite.
	base, rolled int
	rollbacks    uint64
	state        *rewind
}

// Pending is what the next write carries: the messages the store does
// not hold, or — after a compaction or a rollback the store does not
// hold yet, or when rewrite asks for it (a failed write may have landed
// all the same) — everything from where the store's working history
// starts, to replace what it holds: what compactions since archived
// (the store may hold none of it, or not all: they ran while a write was
// under way) and the working history after it. A rewrite from the
// archive's end instead took the store's messages there for the archive:
// two compactions behind one write lost the first's summary and stored a
// message twice, and one that archived messages not yet stored left a
// gap the store refused for good.
func (h *History) Pending(rewrite bool) Write {
	p := h.earlier()
	w := Write{Start: p.base, base: p.base, rolled: h.rolledCount(), rollbacks: p.rollbacks}
	if rewrite || h.rewritePending() {
		from := min(h.stored.base, p.base)
		if p.lowered {
			from = min(from, p.floor)
		}
		w.From, w.Rewrite, w.state = from, true, h.rewind()
		w.Messages = append(slices.Clone(p.archive[from:p.base]), h.storedView()...)
		return w
	}
	// A rewrite replaces this when the working history shrank.
	w.From = p.base + w.rolled + h.stored.count
	w.Messages = slices.Clone(h.msgs[min(h.stored.count, len(h.msgs)):])
	return w
}

// Stored records that w landed.
func (h *History) Stored(w Write) {
	h.stored.count = w.From + len(w.Messages) - w.base - w.rolled
	h.stored.base, h.stored.rollbacks = w.base, w.rollbacks
	switch {
	case h.past == nil:
	case !h.rewritePending():
		h.past.before, h.past.lowered = nil, false
	case w.Rewrite:
		// A later rewrite waits: what Revert goes back to is now this
		// write's history.
		h.past.before = w.state
	}
}

// Revert takes the history back to what the store holds, after a write
// failed for good: a compaction or rollback it does not hold is undone,
// and the working history is cut to what it stored.
func (h *History) Revert() {
	if h.rewritePending() {
		p := h.changing()
		h.msgs, p.rolled, p.base = p.before.msgs, p.before.rolled, h.stored.base
		p.rollbacks = h.stored.rollbacks
		p.archive = slices.Clip(p.before.archive)
		p.archivedCalls, p.before, h.checked = CountCalls(p.archive), nil, 0
		p.lowered = false
	}
	h.msgs = slices.Clip(h.msgs[:h.stored.count]) // a cancelled request may still read the old tail
	h.checked = min(h.checked, h.stored.count)
	h.ids = nil // what was cut gave ids back: counted again when needed
}

// CloseCalls answers the tool calls of the last assistant message that
// have no result, in call order, so the history stays valid for a
// provider: with the result known for it (known, by call id: one the
// store kept and a subscriber was told), else with content as an error
// result. It returns how many it answered with content.
func (h *History) CloseCalls(content string, known map[string]*llm.Message) int {
	ai := LastAssistant(h.msgs)
	if ai < 0 {
		return 0
	}
	answered := map[string]bool{}
	for _, m := range h.msgs[ai+1:] {
		if m.Role == llm.RoleTool {
			answered[m.ToolCallId] = true
		}
	}
	n := 0
	for _, tc := range h.msgs[ai].ToolCalls {
		switch {
		case answered[tc.Id]:
		case known[tc.Id] != nil:
			h.msgs = append(h.msgs, known[tc.Id])
		default:
			h.msgs = append(h.msgs, llm.ToolResultMessage(tc.Id, content, true))
			n++
		}
	}
	return n
}

// LastAssistant is the index of the last assistant message of msgs, or -1.
func LastAssistant(msgs []*llm.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleAssistant {
			return i
		}
	}
	return -1
}

// CountCalls counts the tool calls of msgs.
func CountCalls(msgs []*llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.ToolCalls)
	}
	return n
}

// interleave puts spans back into msgs.
func interleave(msgs []*llm.Message, spans []span) []*llm.Message {
	out := make([]*llm.Message, 0, len(msgs))
	i := 0
	for _, sp := range spans {
		out = append(out, msgs[i:sp.at]...)
		out = append(out, sp.msgs...)
		i = sp.at
	}
	return append(out, msgs[i:]...)
}

// splitRolled separates stored messages into the working history and the
// rolled-back spans.
func splitRolled(msgs []*llm.Message) (history []*llm.Message, spans []span) {
	for _, m := range msgs {
		if !m.RolledBack {
			history = append(history, m)
			continue
		}
		if n := len(spans); n > 0 && spans[n-1].at == len(history) {
			spans[n-1].msgs = append(spans[n-1].msgs, m)
		} else {
			spans = append(spans, span{at: len(history), msgs: []*llm.Message{m}})
		}
	}
	return history, spans
}
