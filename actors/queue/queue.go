// Package queue is a session's queues as a plain value: the prompts that
// wait for the run in progress to end, and the steering that waits for
// its next turn gap, each with the images it brought. The images sit
// behind a pointer: most sessions never queue one, and an idle session
// stays small.
package queue

import (
	"maps"
	"slices"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/store"
)

// Queues are a session's queued prompts and steering. The zero value is
// empty. The slices it returns are its own: read them, never change them.
type Queues struct {
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
	q := Queues{prompts: slices.Clone(v.PromptQueue), steering: slices.Clone(v.SteeringQueue)}
	if len(v.PromptImages) > 0 || len(v.SteeringImages) > 0 {
		q.images = &images{prompts: slices.Clone(v.PromptImages), steering: maps.Clone(v.SteeringImages)}
	}
	return q
}

// Save writes the queues into v (copied).
func (q *Queues) Save(v *store.Volatile) {
	v.PromptQueue, v.SteeringQueue = slices.Clone(q.prompts), slices.Clone(q.steering)
	if im := q.images; im != nil {
		v.PromptImages, v.SteeringImages = slices.Clone(im.prompts), maps.Clone(im.steering)
	}
}

// Prompts are the queued prompts' texts, in order.
func (q *Queues) Prompts() []string { return q.prompts }

// Steering is the queued steering, in order.
func (q *Queues) Steering() []*eventsv1.SteeringItem { return q.steering }

// Empty reports whether nothing is queued.
func (q *Queues) Empty() bool { return len(q.prompts) == 0 && len(q.steering) == 0 }

// AddPrompt queues a prompt and returns its position (from 1).
func (q *Queues) AddPrompt(text string, imgs []*llm.Image) int {
	if len(imgs) > 0 {
		im := q.imagesMade()
		for len(im.prompts) < len(q.prompts) {
			im.prompts = append(im.prompts, nil)
		}
		im.prompts = append(im.prompts, imgs)
	}
	q.prompts = append(q.prompts, text)
	return len(q.prompts)
}

// AddSteering queues a steering message.
func (q *Queues) AddSteering(item *eventsv1.SteeringItem, imgs []*llm.Image) {
	q.steering = append(q.steering, item)
	if len(imgs) > 0 {
		im := q.imagesMade()
		if im.steering == nil {
			im.steering = map[string][]*llm.Image{}
		}
		im.steering[item.Ref] = imgs
	}
}

// PopFirst takes the first queued prompt out, with its images.
func (q *Queues) PopFirst() (string, []*llm.Image) {
	text, imgs := q.prompts[0], q.promptImages(0)
	q.prompts = q.prompts[1:]
	if im := q.images; im != nil && len(im.prompts) > 0 {
		im.prompts = im.prompts[1:]
	}
	return text, imgs
}

// PopLast takes the last queued prompt out, with its images.
func (q *Queues) PopLast() (string, []*llm.Image) {
	last := len(q.prompts) - 1
	text, imgs := q.prompts[last], q.promptImages(last)
	q.prompts = q.prompts[:last]
	if im := q.images; im != nil && len(im.prompts) > last {
		im.prompts = im.prompts[:last]
	}
	return text, imgs
}

// TakePrompts takes every queued prompt out, each as a user message with
// its images.
func (q *Queues) TakePrompts() []*llm.Message {
	var msgs []*llm.Message
	for i, t := range q.prompts {
		msgs = append(msgs, llm.UserMessageWith(t, q.promptImages(i)))
	}
	q.prompts = nil
	if q.images != nil {
		q.images.prompts = nil
	}
	return msgs
}

// TakeSteering takes every queued steering message out, each as a user
// message with its images, and their refs.
func (q *Queues) TakeSteering() (msgs []*llm.Message, refs []string) {
	for _, st := range q.steering {
		refs = append(refs, st.Ref)
		var imgs []*llm.Image
		if q.images != nil {
			imgs = q.images.steering[st.Ref]
		}
		msgs = append(msgs, llm.UserMessageWith(st.Text, imgs))
	}
	q.steering = nil
	if q.images != nil {
		q.images.steering = nil
	}
	return msgs, refs
}

// Clear empties the queues and returns what they held.
func (q *Queues) Clear() ([]string, []*eventsv1.SteeringItem) {
	prompts, steering := q.prompts, q.steering
	*q = Queues{}
	return prompts, steering
}

// promptImages is the images of queued prompt i.
func (q *Queues) promptImages(i int) []*llm.Image {
	if im := q.images; im != nil && i < len(im.prompts) {
		return im.prompts[i]
	}
	return nil
}

// imagesMade returns q.images, made when there is none.
func (q *Queues) imagesMade() *images {
	if q.images == nil {
		q.images = &images{}
	}
	return q.images
}
