package queue_test

import (
	"slices"
	"testing"

	"github.com/tack-run/tack/actors/queue"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/store"
)

func img(name string) []*llm.Image { return []*llm.Image{{Url: "data:image/png;base64," + name}} }

// contents renders user messages as "text[+image]".
func contents(msgs []*llm.Message) []string {
	var out []string
	for _, m := range msgs {
		s := m.Content
		for _, i := range m.Images {
			s += "+" + i.Url[len("data:image/png;base64,"):]
		}
		out = append(out, s)
	}
	return out
}

// TestPrompts: prompts keep their images through every way out of the
// queue, and a prompt without images after one with images gets none.
func TestPrompts(t *testing.T) {
	var q queue.Queues
	if !q.Empty() {
		t.Fatal("the zero value is not empty")
	}
	for i, p := range []struct {
		text   string
		images []*llm.Image
	}{{"a", nil}, {"b", img("B")}, {"c", nil}, {"d", img("D")}} {
		if pos := q.AddPrompt(p.text, p.images); pos != i+1 {
			t.Fatalf("AddPrompt(%s) = %d, want %d", p.text, pos, i+1)
		}
	}
	if text, imgs := q.PopFirst(); text != "a" || imgs != nil {
		t.Fatalf("PopFirst = %s %v", text, imgs)
	}
	if text, imgs := q.PopLast(); text != "d" || imgs[0].Url != "data:image/png;base64,D" {
		t.Fatalf("PopLast = %s %v", text, imgs)
	}
	var v store.Volatile
	q.Save(&v)
	r := queue.Restore(&v)
	if got := contents(r.TakePrompts()); !slices.Equal(got, []string{"b+B", "c"}) {
		t.Fatalf("restored prompts %q", got)
	}
	if !r.Empty() || len(q.Prompts()) != 2 {
		t.Fatal("TakePrompts left prompts, or Restore shares the queue")
	}
}

// TestSteering: steering keeps its images by ref; Clear returns what was
// queued and empties the queues.
func TestSteering(t *testing.T) {
	var q queue.Queues
	q.AddSteering(&eventsv1.SteeringItem{Ref: "st-1", Text: "x"}, img("X"))
	q.AddSteering(&eventsv1.SteeringItem{Ref: "st-2", Text: "y"}, nil)
	msgs, refs := q.TakeSteering()
	if got := contents(msgs); !slices.Equal(got, []string{"x+X", "y"}) || !slices.Equal(refs, []string{"st-1", "st-2"}) {
		t.Fatalf("TakeSteering = %q %q", got, refs)
	}
	q.AddPrompt("p", nil)
	q.AddSteering(&eventsv1.SteeringItem{Ref: "st-3", Text: "z"}, nil)
	prompts, steering := q.Clear()
	if !slices.Equal(prompts, []string{"p"}) || len(steering) != 1 || !q.Empty() {
		t.Fatalf("Clear = %q %v, empty %v", prompts, steering, q.Empty())
	}
}
