package cluster

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	actorcluster "github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/automanaged"
)

// TestSeedView: a member that does not answer in time stays in the view
// until it has not answered for the TTL, and comes back when it answers;
// one whose endpoint refuses or closes the connection, or that belongs
// to another cluster, leaves at once.
func TestSeedView(t *testing.T) {
	var stalled, closing, foreign atomic.Bool
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	serve := func(id string) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			name := "c"
			switch {
			case id == "b" && stalled.Load():
				select {
				case <-release:
				case <-r.Context().Done():
				}
				return
			case id == "c" && closing.Load():
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
				return
			case id == "d" && foreign.Load():
				name = "other"
			}
			_ = json.NewEncoder(w).Encode(automanaged.NewNode(name, id, "127.0.0.1", 1, 2, []string{"k"}))
		}))
		t.Cleanup(s.Close)
		return s
	}
	ids := []string{"a", "b", "c", "d"}
	var seeds []string
	for _, id := range ids {
		seeds = append(seeds, serve(id).Listener.Addr().String())
	}
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	seeds = append(seeds, gone.Addr().String()) // refuses: nothing listens
	gone.Close()

	ttl := time.Minute
	clock := time.Unix(0, 0)
	v := newSeedView(Config{Name: "c", Seeds: seeds, TTL: ttl})
	v.client.Timeout = 100 * time.Millisecond
	v.now = func() time.Time { return clock }
	t.Cleanup(v.close)

	for _, step := range []struct {
		name    string
		do      func()
		advance time.Duration
		want    []string
	}{
		{"all answer", func() {}, 0, []string{"a", "b", "c", "d"}},
		{"b late, c closes, d foreign", func() { stalled.Store(true); closing.Store(true); foreign.Store(true) }, time.Second, []string{"a", "b"}},
		{"b late for the TTL", func() {}, ttl, []string{"a"}},
		{"b answers again", func() { stalled.Store(false) }, time.Second, []string{"a", "b"}},
	} {
		step.do()
		clock = clock.Add(step.advance)
		if got := memberIDs(v.poll(t.Context())); !slices.Equal(got, step.want) {
			t.Fatalf("%s: view %q, want %q", step.name, got, step.want)
		}
	}
}

// memberIDs are the ids of members.
func memberIDs(members []*actorcluster.Member) []string {
	out := make([]string, len(members))
	for i, m := range members {
		out[i] = m.Id
	}
	return out
}
