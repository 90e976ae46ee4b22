package script

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tack-run/tack/llm"
)

func TestConcurrentStreamsTakeDistinctTurns(t *testing.T) {
	const n = 50
	turns := make([]string, n)
	want := make([]string, n)
	for i := range n {
		turns[i] = fmt.Sprintf(`{"text": "t%02d"}`, i)
		want[i] = fmt.Sprintf("t%02d", i)
	}
	p := New(mustParse(t, `{"turns": [`+strings.Join(turns, ",")+`], "when_exhausted": "error"}`))
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := p.Stream(t.Context(), &llm.Request{}, func(llm.Chunk) {})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			got = append(got, resp.Message.GetContent())
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("turns taken %q, want each of %q once", got, want)
	}
}
