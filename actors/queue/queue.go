// Package queue is a session's queues: the prompts that wait for the run
// in progress to end, and the steering that waits for its next turn gap,
// each with the images it brought. Everything sits behind one pointer,
// nil while nothing is queued, and the images behind another: most
// sessions never queue an image, and an idle session stays small.
package queue

import (
	"maps"
	"slices"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/store"
)

// Queues are a session's queued prompts and steering. The zero value is
// empty, and holds nothing but a nil pointer until something is queued:
// an idle session's size class has no room for three slice headers that
// are nearly always empty. The slices it returns are its own: read them,
// never change them. A Queues is not copied: a copy shares what it holds.
type Queues struct {
	w *waiting
}

// waiting is what the queues hold while anything is queued.
type waiting struct {
	prompts  []string
	steering []*eventsv1.SteeringItem
	images   *images
}

// images are the images of the queued prompts and steering.
type images struct {
	// prompts holds them by the prompt's index in the queue; shorter when
	// the last prompts have none.
	prompts [][]*llm.Image
	// steering holds them by the steering message's ref.
	steering map[string][]*llm.Image
}

// Restore is the queues a stored volatile state holds (copied).
func Restore(v *store.Volatile) Queues {
	if len(v.PromptQueue) == 0 && len(v.SteeringQueue) == 0 {
		return Queues{}
	}
	w := &waiting{prompts: slices.Clone(v.PromptQueue), steering: slices.Clone(v.SteeringQueue)}
	if len(v.PromptImages) > 0 || len(v.SteeringImages) > 0 {
		w.images = &images{prompts: slices.Clone(v.PromptImages), steering: maps.Clone(v.SteeringImages)}
	}
	return Queues{w: w}
}

// Save writes the queues into v (copied).
func (q *Queues) Save(v *store.Volatile) {
	v.PromptQueue, v.SteeringQueue = slices.Clone(q.Prompts()), slices.Clone(q.Steering())
	if q.w != nil && q.w.images != nil {
		v.PromptImages, v.SteeringImages = slices.Clone(q.w.images.prompts), maps.Clone(q.w.images.steering)
	}
}

// Prompts are the queued prompts' texts, in order.
func (q *Queues) Prompts() []string {
	if q.w == nil {
		return nil
	}
	return q.w.prompts
}

// Steering is the queued steering, in order.
func (q *Queues) Steering() []*eventsv1.SteeringItem {
	if q.w == nil {
		return nil
	}
	return q.w.steering
}

// Empty reports whether nothing is queued.
func (q *Queues) Empty() bool { return len(q.Prompts()) == 0 && len(q.Steering()) == 0 }

// AddPrompt queues a prompt and returns its position (from 1).
func (q *Queues) AddPrompt(text string, imgs []*llm.Image) int {
	w := q.made()
	if len(imgs) > 0 {
		im := w.imagesMade()
		for len(im.prompts) < len(w.prompts) {
			im.prompts = append(im.prompts, nil)
		}
		im.prompts = append(im.prompts, imgs)
	}
	w.prompts = append(w.prompts, text)
	return len(w.prompts)
}

// AddSteering queues a steering message.
func (q *Queues) AddSteering(item *eventsv1.SteeringItem, imgs []*llm.Image) {
	w := q.made()
	w.steering = append(w.steering, item)
	if len(imgs) > 0 {
		im := w.imagesMade()
		if im.steering == nil {
			im.steering = map[string][]*llm.Image{}
		}
		im.steering[item.Ref] = imgs
	}
}

// PopFirst takes the first queued prompt out, with its images; there must
// be one.
func (q *Queues) PopFirst() (string, []*llm.Image) {
	w := q.w
	text, imgs := w.prompts[0], w.promptImages(0)
	w.prompts = w.prompts[1:]
	if im := w.images; im != nil && len(im.prompts) > 0 {
		im.prompts = im.prompts[1:]
	}
	q.releaseIfEmpty()
	return text, imgs
}

// PopLast takes the last queued prompt out, with its images; there must
// be one.
func (q *Queues) PopLast() (string, []*llm.Image) {
	w := q.w
	last := len(w.prompts) - 1
	text, imgs := w.prompts[last], w.promptImages(last)
	w.prompts = w.prompts[:last]
	if im := w.images; im != nil && len(im.prompts) > last {
		im.prompts = im.prompts[:last]
	}
	q.releaseIfEmpty()
	return text, imgs
}

// TakePrompts takes every queued prompt out, each as a user message with
// its images.
func (q *Queues) TakePrompts() []*llm.Message {
	w := q.w
	if w == nil {
		return nil
	}
	var msgs []*llm.Message
	for i, t := range w.prompts {
		msgs = append(msgs, llm.UserMessageWith(t, w.promptImages(i)))
	}
	w.prompts = nil
	if w.images != nil {
		w.images.prompts = nil
	}
	q.releaseIfEmpty()
	return msgs
}

// TakeSteering takes every queued steering message out, each as a user
// message with its images, and their refs.
func (q *Queues) TakeSteering() (msgs []*llm.Message, refs []string) {
	w := q.w
	if w == nil {
		return nil, nil
	}
	for _, st := range w.steering {
		refs = append(refs, st.Ref)
		var imgs []*llm.Image
		if w.images != nil {
			imgs = w.images.steering[st.Ref]
		}
		msgs = append(msgs, llm.UserMessageWith(st.Text, imgs))
	}
	w.steering = nil
	if w.images != nil {
		w.images.steering = nil
	}
	q.releaseIfEmpty()
	return msgs, refs
}

// Clear empties the queues and returns what they held.
func (q *Queues) Clear() ([]string, []*eventsv1.SteeringItem) {
	prompts, steering := q.Prompts(), q.Steering()
	q.w = nil
	return prompts, steering
}

// made returns what the queues hold, made when nothing is queued.
func (q *Queues) made() *waiting {
	if q.w == nil {
		q.w = &waiting{}
	}
	return q.w
}

// releaseIfEmpty lets go of what the queues held once nothing is queued,
// so that a session that queued once is back to its idle size.
func (q *Queues) releaseIfEmpty() {
	if q.w != nil && len(q.w.prompts) == 0 && len(q.w.steering) == 0 {
		q.w = nil
	}
}

// promptImages is the images of queued prompt i.
func (w *waiting) promptImages(i int) []*llm.Image {
	if im := w.images; im != nil && i < len(im.prompts) {
		return im.prompts[i]
	}
	return nil
}

// imagesMade returns w.images, made when there is none.
func (w *waiting) imagesMade() *images {
	if w.images == nil {
		w.images = &images{}
	}
	return w.images
}
