package eventjson

import (
	"fmt"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

//go:generate go run ../internal/gentypes -codec -o payload_gen.go

// shape says how a message is written in JSON.
type shape uint8

const (
	shapeObject  shape = iota // {"field":value,...} in declaration order
	shapeRawJSON              // RawJSON: the bytes verbatim
	shapeEvent                // Event: type, session, seq, ts, payload fields
	shapeMessage              // Message: the per-role conversation shape
)

// msgPlan is the cached JSON layout of one message type.
type msgPlan struct {
	shape  shape
	fields []fieldPlan
}

// fieldPlan is the cached JSON layout of one field.
type fieldPlan struct {
	fd   protoreflect.FieldDescriptor
	name string // proto field name: the JSON key
	key  string // `"name":`, ready to append
	// nullable fields are written as null when unset: proto3 optional
	// scalars and singular message fields.
	nullable bool
	// oneof fields (members of a real oneof) are left out when unset.
	oneof bool
	msg   *msgPlan // for message fields
}

var (
	rawJSONDesc = (&eventsv1.RawJSON{}).ProtoReflect().Descriptor()
	eventDesc   = (&eventsv1.Event{}).ProtoReflect().Descriptor()
	messageDesc = (&eventsv1.Message{}).ProtoReflect().Descriptor()
	payloadDesc = eventDesc.Oneofs().ByName("payload")
)

// Plans of the vocabulary, built once at init and read-only afterwards, so
// the hot path needs no lock.
var (
	staticPlans map[protoreflect.MessageDescriptor]*msgPlan
	// payloadPlans[i] is the plan of the payload message of the event
	// type events.Types()[i].
	payloadPlans [numTypes]*msgPlan
	// eventPrefix[i] is `{"type":"<events.Types()[i]>","session":`.
	eventPrefix [numTypes]string
	// typeIndexes maps a wire name to its index in events.Types().
	typeIndexes map[string]int
)

// Plans of messages outside the vocabulary, built on first use.
var (
	dynamicMu    sync.Mutex
	dynamicPlans sync.Map // protoreflect.MessageDescriptor → *msgPlan
)

func init() {
	p := planner{plans: map[protoreflect.MessageDescriptor]*msgPlan{}}
	for _, fd := range []protoreflect.FileDescriptor{
		eventsv1.File_events_v1_events_proto,
		eventsv1.File_events_v1_commands_proto,
	} {
		msgs := fd.Messages()
		for i := range msgs.Len() {
			if _, err := p.plan(msgs.Get(i)); err != nil {
				panic(err)
			}
		}
	}
	staticPlans = p.plans

	fields := payloadDesc.Fields()
	typeNames := events.Types()
	if fields.Len() != numTypes || len(typeNames) != numTypes {
		panic("eventjson: generated code is stale; run go generate ./events/...")
	}
	typeIndexes = make(map[string]int, numTypes)
	for i := range numTypes {
		fd := fields.Get(i)
		if string(fd.Name()) != typeNames[i] {
			panic("eventjson: generated code is stale; run go generate ./events/...")
		}
		payloadPlans[i] = staticPlans[fd.Message()]
		eventPrefix[i] = `{"type":"` + typeNames[i] + `","session":`
		typeIndexes[typeNames[i]] = i
	}
}

// planFor returns the plan of md, building and caching it on first use for
// messages outside the vocabulary.
func planFor(md protoreflect.MessageDescriptor) (*msgPlan, error) {
	if mp := staticPlans[md]; mp != nil {
		return mp, nil
	}
	if mp, ok := dynamicPlans.Load(md); ok {
		return mp.(*msgPlan), nil
	}
	dynamicMu.Lock()
	defer dynamicMu.Unlock()
	if mp, ok := dynamicPlans.Load(md); ok {
		return mp.(*msgPlan), nil
	}
	p := planner{plans: map[protoreflect.MessageDescriptor]*msgPlan{}, known: staticPlans}
	mp, err := p.plan(md)
	if err != nil {
		return nil, err
	}
	// Store every plan built along the way, so that a recursive type is
	// built once.
	for d, x := range p.plans {
		dynamicPlans.LoadOrStore(d, x)
	}
	return mp, nil
}

// planner builds plans; plans registered before their fields are filled in
// let recursive types (Event → SubAgentEvent → Event) refer to themselves.
type planner struct {
	plans map[protoreflect.MessageDescriptor]*msgPlan
	known map[protoreflect.MessageDescriptor]*msgPlan
}

func (p *planner) plan(md protoreflect.MessageDescriptor) (*msgPlan, error) {
	if mp := p.known[md]; mp != nil {
		return mp, nil
	}
	if mp := p.plans[md]; mp != nil {
		return mp, nil
	}
	mp := &msgPlan{}
	p.plans[md] = mp
	switch md.FullName() {
	case rawJSONDesc.FullName():
		mp.shape = shapeRawJSON
	case eventDesc.FullName():
		mp.shape = shapeEvent
	case messageDesc.FullName():
		mp.shape = shapeMessage
	}
	fields := md.Fields()
	mp.fields = make([]fieldPlan, fields.Len())
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.IsMap() {
			return nil, fmt.Errorf("events: JSON: map field %s is not supported", fd.FullName())
		}
		f := fieldPlan{
			fd:   fd,
			name: string(fd.Name()),
			key:  `"` + string(fd.Name()) + `":`,
		}
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			f.oneof = true
		} else if !fd.IsList() && fd.HasPresence() {
			f.nullable = true
		}
		if fd.Message() != nil {
			sub, err := p.plan(fd.Message())
			if err != nil {
				return nil, err
			}
			f.msg = sub
		}
		mp.fields[i] = f
	}
	return mp, nil
}

// has reports whether name is one of mp's fields.
func (mp *msgPlan) has(name string) bool {
	for i := range mp.fields {
		if mp.fields[i].name == name {
			return true
		}
	}
	return false
}
