package actors

import (
	"context"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/llm"
)

// TestSessionSizeClass keeps the session struct within the 512-byte size
// class: an idle session is mostly this struct. The next class is 576,
// and an object of more than 512 bytes that holds pointers carries an
// 8-byte malloc header inside its allocation (Go 1.22 on), where one of
// 512 or less keeps its pointer bitmap in its span. The struct took 760
// bytes, in the 768-byte class, until its usage, what its hooks keep for
// later and its queues moved behind pointers that stay nil until the
// session has any (issue 30, finding 20), and 568, in the 576-byte
// class, until its history's archive and rolled-back spans did too
// (finding 21).
func TestSessionSizeClass(t *testing.T) {
	const limit = 512
	if got := unsafe.Sizeof(session{}); got > limit {
		t.Fatalf("session is %d bytes, over the %d-byte size class: group its flags, or move what an idle session does not use behind a pointer", got, limit)
	}
}

// TestMailboxSizeClass keeps a session's mailbox within the 160-byte
// size class it has had since it allocates its queues on first use: every
// idle session has one.
func TestMailboxSizeClass(t *testing.T) {
	if got := unsafe.Sizeof(mailbox{}); got > 160 {
		t.Fatalf("mailbox is %d bytes, over the 160-byte size class", got)
	}
}

func TestFifo(t *testing.T) {
	tests := []struct {
		name string
		// ops: a positive number pushes it, 0 pops.
		ops      []int
		popped   []int
		wantCap0 bool // the array was given back at the end
		keep0    bool // pop keeps no array (the system messages' queue)
	}{
		{name: "in order", ops: []int{1, 2, 3, 0, 0, 4, 0, 0}, popped: []int{1, 2, 3, 4}},
		{name: "pop empty", ops: []int{0, 1, 0, 0}, popped: []int{1}},
		{name: "full with popped slots in front moves down",
			ops:    []int{1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 9, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0},
			popped: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{name: "a grown array is given back once drained",
			ops:    []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0},
			popped: []int{1, 2, 3, 4, 5, 6, 7, 8, 9}, wantCap0: true},
		{name: "a queue that keeps nothing gives its array back once drained",
			ops: []int{1, 0}, popped: []int{1}, wantCap0: true, keep0: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q fifo
			var got []int
			for _, op := range tt.ops {
				if op > 0 {
					q.push(op)
					continue
				}
				keep := keepSlots
				if tt.keep0 {
					keep = 0
				}
				if m, ok := q.pop(keep); ok {
					got = append(got, m.(int))
				}
			}
			if !slices.Equal(got, tt.popped) {
				t.Fatalf("popped %v, want %v", got, tt.popped)
			}
			if (cap(q.buf) == 0) != tt.wantCap0 || cap(q.buf) > keepSlots {
				t.Fatalf("cap %d after draining (give back: %v)", cap(q.buf), tt.wantCap0)
			}
			if slices.ContainsFunc(q.buf[:cap(q.buf)], func(m any) bool { return m != nil }) {
				t.Fatal("a drained fifo still refers to a message")
			}
		})
	}
}

// recorder is a MessageInvoker that records what it is given.
type recorder struct {
	got       []string
	escalated []any
	// panicOn makes the user message with this text panic.
	panicOn string
}

func (r *recorder) InvokeSystemMessage(m any) { r.got = append(r.got, "sys:"+m.(string)) }

func (r *recorder) InvokeUserMessage(m any) {
	if m == r.panicOn {
		panic("boom")
	}
	if env, ok := m.(*actor.MessageEnvelope); ok {
		m = env.Message
	}
	switch m := m.(type) {
	case *streamChunk:
		r.got = append(r.got, "chunk:"+m.chunk.Text)
	case *streamDone:
		r.got = append(r.got, "done")
	default:
		r.got = append(r.got, m.(string))
	}
}

func (r *recorder) EscalateFailure(reason, m any) { r.escalated = append(r.escalated, reason, m) }

// heldDispatcher runs scheduled functions when told, so that messages
// can be queued before the mailbox runs.
type heldDispatcher struct{ fns []func() }

func (d *heldDispatcher) Schedule(fn func()) { d.fns = append(d.fns, fn) }
func (d *heldDispatcher) Throughput() int    { return 2 }
func (d *heldDispatcher) runAll() {
	for len(d.fns) > 0 {
		fn := d.fns[0]
		d.fns = d.fns[1:]
		fn()
	}
}

func TestMailbox(t *testing.T) {
	tests := []struct {
		name string
		// post: "s:x" posts system message x, "u:x" user message x,
		// "c:x" a stream's chunk x, "d:" a stream's end.
		post      []string
		panicOn   string
		want      []string
		escalated bool
		left      int // user messages still queued
	}{
		{name: "system messages first",
			post: []string{"u:a", "u:b", "s:x", "u:c", "s:y"},
			want: []string{"sys:x", "sys:y", "a", "b", "c"}},
		{name: "a stream's messages wait behind the others, in their order",
			post: []string{"c:1", "c:2", "u:abort", "c:3", "d:", "u:state", "s:x"},
			want: []string{"sys:x", "abort", "state", "chunk:1", "chunk:2", "chunk:3", "done"}},
		{name: "suspended holds a stream's messages too",
			post: []string{"c:1", "s:suspend"},
			want: nil, left: 1},
		{name: "suspended holds user messages, system ones run",
			post: []string{"u:a", "s:suspend", "s:x"},
			want: []string{"sys:x"}, left: 1},
		{name: "resumed runs them",
			post: []string{"u:a", "s:suspend", "s:resume", "u:b"},
			want: []string{"a", "b"}},
		{name: "a panic is escalated, then the mailbox goes on",
			post: []string{"u:a", "u:bad", "u:c"}, panicOn: "bad",
			want: []string{"a", "c"}, escalated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{panicOn: tt.panicOn}
			d := &heldDispatcher{}
			m := newMailbox()
			m.RegisterHandlers(r, d)
			m.Start()
			for _, p := range tt.post {
				switch v := p[2:]; {
				case p == "s:suspend":
					m.PostSystemMessage(&actor.SuspendMailbox{})
				case p == "s:resume":
					m.PostSystemMessage(&actor.ResumeMailbox{})
				case p[0] == 's':
					m.PostSystemMessage(v)
				case p[0] == 'c':
					m.PostUserMessage(&streamChunk{chunk: llm.Chunk{Kind: llm.ChunkText, Text: v}})
				case p[0] == 'd':
					m.PostUserMessage(&streamDone{})
				default:
					m.PostUserMessage(v)
				}
			}
			if len(d.fns) != 1 {
				t.Fatalf("scheduled %d times, want once for a mailbox that has not run", len(d.fns))
			}
			d.runAll()
			if !slices.Equal(r.got, tt.want) {
				t.Fatalf("ran %q, want %q", r.got, tt.want)
			}
			if escalated := len(r.escalated) > 0; escalated != tt.escalated {
				t.Fatalf("escalated %v, want %v", r.escalated, tt.escalated)
			}
			if tt.escalated && r.escalated[1] != tt.panicOn {
				t.Fatalf("escalated with message %v, want %q", r.escalated[1], tt.panicOn)
			}
			if got := m.UserMessageCount(); got != tt.left {
				t.Fatalf("%d user messages left, want %d", got, tt.left)
			}
		})
	}
}

// dying is a recorder whose actor stops at the system message "stop" and
// records what its mailbox hands it after that as "late:" and the text.
type dying struct{ recorder }

func (d *dying) Actor() actor.Actor    { return d }
func (d *dying) Receive(actor.Context) {}
func (d *dying) stopped() bool         { return slices.Contains(d.got, "sys:stop") }
func (d *dying) tooLate(m any) {
	if env, ok := m.(*actor.MessageEnvelope); ok {
		m = env.Message
	}
	if c, ok := m.(*streamChunk); ok {
		m = "chunk:" + c.chunk.Text
	}
	d.got = append(d.got, "late:"+m.(string))
}

// TestMailboxAfterStop: once a system message has stopped the actor, the
// user messages still queued, a stream's among them, go to its tooLate
// in order, none runs, and a message posted later goes there at once.
func TestMailboxAfterStop(t *testing.T) {
	r := &dying{}
	d := &heldDispatcher{}
	m := newMailbox()
	m.RegisterHandlers(r, d)
	w := newWindow()
	w.queued.Store(1) // the pump took a slot for the chunk
	m.PostUserMessage("a")
	m.PostUserMessage(&streamChunk{chunk: llm.Chunk{Kind: llm.ChunkText, Text: "1"}, window: w})
	m.PostUserMessage(&actor.MessageEnvelope{Message: "b"})
	m.PostSystemMessage("stop")
	m.PostSystemMessage("x")
	d.runAll()
	m.PostUserMessage("c")
	d.runAll()
	want := []string{"sys:stop", "late:a", "late:b", "late:chunk:1", "sys:x", "late:c"}
	if !slices.Equal(r.got, want) {
		t.Fatalf("got %q, want %q", r.got, want)
	}
	if n := m.UserMessageCount(); n != 0 {
		t.Fatalf("%d user messages counted, want 0", n)
	}
	if n := w.queued.Load(); n != 0 {
		t.Fatalf("the stream's window counts %d chunks, want 0: the chunk's slot was not given back", n)
	}
}

func TestWindow(t *testing.T) {
	w := newWindow()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range streamWindow {
		if !w.acquire(ctx) {
			t.Fatal("acquire failed in an open window")
		}
	}
	took := make(chan bool)
	go func() { took <- w.acquire(ctx) }()
	select {
	case <-took:
		t.Fatal("acquire went through a full window")
	case <-time.After(20 * time.Millisecond):
	}
	// A pump that waits is woken when the window has drained to half.
	for range streamWindow / 2 {
		w.release()
	}
	if !<-took {
		t.Fatal("acquire failed once the window drained")
	}
	if got := w.queued.Load(); got != streamWindow/2+1 {
		t.Fatalf("%d queued, want %d", got, streamWindow/2+1)
	}
	for w.queued.Load() < streamWindow {
		w.acquire(ctx)
	}
	go func() { took <- w.acquire(ctx) }()
	cancel()
	if <-took {
		t.Fatal("acquire took a slot after its context was done")
	}
}

// TestMailboxReleasesWindow: taking a chunk from the mailbox gives its
// slot back, whatever the session then does with it.
func TestMailboxReleasesWindow(t *testing.T) {
	w := newWindow()
	for range 3 {
		w.acquire(context.Background())
	}
	d := &heldDispatcher{}
	m := newMailbox()
	m.RegisterHandlers(&recorder{}, d)
	for _, text := range []string{"a", "b"} {
		m.PostUserMessage(&streamChunk{chunk: llm.Chunk{Kind: llm.ChunkText, Text: text}, window: w})
	}
	// A chunk in an envelope (a sender with headers or middleware) counts
	// the same.
	m.PostUserMessage(&actor.MessageEnvelope{Message: &streamChunk{chunk: llm.Chunk{Kind: llm.ChunkText, Text: "c"}, window: w}})
	d.runAll()
	if got := w.queued.Load(); got != 0 {
		t.Fatalf("%d chunks still counted after the mailbox took them all", got)
	}
}
