package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
)

// Bench runs the store benchmarks against the stores newStore makes:
//
//   - Commit/sessions=N: Apply of one message (and the session state), the
//     commit a session makes per message, from N sessions at once; reports
//     commits/s.
//   - List/sessions=10000: paging through 10,000 stored sessions
//     (MaxPageSize pages); one op lists them all.
//   - Load/sessions=10000: loading each of 10,000 stored sessions (8
//     messages and a volatile state each), as restoring them all after a
//     restart would; one op loads them all.
func Bench(b *testing.B, newStore Factory) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("Commit/sessions=%d", n), func(b *testing.B) { benchCommit(b, newStore(b), n) })
	}
	// One store of 10,000 sessions serves List and Load; it is filled by
	// the first of them that runs.
	shared := newStore(b)
	var (
		once sync.Once
		ids  []string
	)
	stored := func(b *testing.B) (store.Store, []string) {
		once.Do(func() { ids = fill(b, shared, 10000) })
		return shared, ids
	}
	b.Run("List/sessions=10000", func(b *testing.B) {
		st, ids := stored(b)
		for b.Loop() {
			if n := listAll(b, st); n != len(ids) {
				b.Fatalf("listed %d, want %d", n, len(ids))
			}
		}
		b.ReportMetric(float64(len(ids))*float64(b.N)/b.Elapsed().Seconds(), "sessions/s")
	})
	b.Run("Load/sessions=10000", func(b *testing.B) {
		st, ids := stored(b)
		for b.Loop() {
			for _, id := range ids {
				if _, err := st.Load(b.Context(), id); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(len(ids))*float64(b.N)/b.Elapsed().Seconds(), "sessions/s")
	})
}

func benchCommit(b *testing.B, st store.Store, sessions int) {
	ctx := b.Context()
	for i := range sessions {
		if err := st.Create(ctx, fmt.Sprintf("b%03d", i), store.Config{Model: "m"}); err != nil {
			b.Fatal(err)
		}
	}
	msg := &eventsv1.Message{Role: "assistant", Content: "a reply of about sixty bytes, a typical streamed answer."}
	var next atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Go(func() {
			id := fmt.Sprintf("b%03d", i)
			for k := 0; next.Add(1) <= int64(b.N); k++ {
				err := st.Apply(ctx, id, &store.Batch{From: k, Messages: []*eventsv1.Message{msg}, State: "streaming"})
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}

// fill stores n sessions of 8 messages each, from 32 goroutines.
func fill(b *testing.B, st store.Store, n int) []string {
	ctx := context.Background()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("s%05d", i)
	}
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := range 32 {
		wg.Go(func() {
			for i := w; i < n; i += 32 {
				err := st.Create(ctx, ids[i], store.Config{Model: "m", Spec: json.RawMessage(`{"system":"You are helpful.","tools":["shell"]}`)})
				if err == nil {
					err = st.Apply(ctx, ids[i], &store.Batch{Messages: msgs(0, 8), State: "idle",
						Usage: &eventsv1.Usage{TotalTokens: 1234}, Volatile: fullVolatile(time.Time{})})
				}
				if err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return ids
}

func listAll(b *testing.B, st store.Store) int {
	n := 0
	for cursor := ""; ; {
		page, err := st.List(b.Context(), store.Page{Limit: store.MaxPageSize, Cursor: cursor})
		if err != nil {
			b.Fatal(err)
		}
		n += len(page.Sessions)
		if cursor = page.Next; cursor == "" {
			return n
		}
	}
}
