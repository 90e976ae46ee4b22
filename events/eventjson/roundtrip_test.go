package eventjson_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// fill sets every field of m to a non-default value, in the shapes the
// JSON form keeps: a conversation Message is an assistant message (the
// fields of other roles are not written for it), an Event gets a payload
// and a timestamp in whole microseconds, and nesting stops at depth 3.
func fill(m protoreflect.Message, depth int) {
	switch msg := m.Interface().(type) {
	case *eventsv1.RawJSON:
		msg.Json = []byte(`{"k":[1,2.50,"x"],"a":null}`)
		return
	case *eventsv1.Message:
		msg.Role, msg.Content, msg.Thinking = "assistant", "text", "thought"
		msg.ToolCalls = []*eventsv1.ToolCall{{Id: "c-1", Name: "sleep", Args: raw(`{"ms":10}`)}}
		return
	case *eventsv1.Event:
		msg.Session, msg.Seq, msg.TsUnixNano = "s9", 77, 1_700_000_000_123_456_000
		if depth < 3 {
			msg.Payload = &eventsv1.Event_MessageDelta{MessageDelta: &eventsv1.MessageDelta{Delta: "d"}}
		}
		return
	}
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() && m.WhichOneof(od) != nil {
			continue // one member of a real oneof
		}
		switch {
		case fd.IsList():
			l := m.Mutable(fd).List()
			for range 2 {
				if fd.Message() != nil {
					if depth >= 3 {
						break
					}
					v := l.NewElement()
					fill(v.Message(), depth+1)
					l.Append(v)
				} else {
					l.Append(scalar(fd))
				}
			}
		case fd.Message() != nil:
			if depth < 3 {
				fill(m.Mutable(fd).Message(), depth+1)
			}
		default:
			m.Set(fd, scalar(fd))
		}
	}
}

func scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString("v \"" + string(fd.Name()) + "\"\n")
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.Int32Kind:
		return protoreflect.ValueOfInt32(-2147483648)
	case protoreflect.Int64Kind:
		return protoreflect.ValueOfInt64(-9223372036854775807)
	case protoreflect.Uint64Kind:
		return protoreflect.ValueOfUint64(18446744073709551615)
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(11.25)
	}
	panic(fmt.Sprintf("fill: add a value for %v (%s)", fd.Kind(), fd.FullName()))
}

// TestJSONRoundTrip writes every message of the vocabulary, fully
// populated, and reads it back: what AppendMessage writes,
// Unmarshal reads.
func TestJSONRoundTrip(t *testing.T) {
	var msgs []protoreflect.MessageType
	for _, fd := range []protoreflect.FileDescriptor{eventsv1.File_events_v1_events_proto, eventsv1.File_events_v1_commands_proto} {
		for i := range fd.Messages().Len() {
			mt, err := protoregistry.GlobalTypes.FindMessageByName(fd.Messages().Get(i).FullName())
			if err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, mt)
		}
	}
	for _, p := range payloads() {
		ev := events.New(p)
		t.Run("event "+events.Type(ev), func(t *testing.T) {
			fill(p.ProtoReflect(), 1)
			ev.Session, ev.Seq, ev.TsUnixNano = "s1", 5, testTS/1000*1000
			roundTrip(t, ev)
		})
	}
	for _, mt := range msgs {
		t.Run(string(mt.Descriptor().Name()), func(t *testing.T) {
			m := mt.New()
			fill(m, 0)
			roundTrip(t, m.Interface())
			roundTrip(t, mt.New().Interface()) // empty
		})
	}
}

// payloads returns a new, empty payload of every event type, in proto
// order.
func payloads() []proto.Message {
	ev := (&eventsv1.Event{}).ProtoReflect()
	fields := ev.Descriptor().Oneofs().ByName("payload").Fields()
	out := make([]proto.Message, fields.Len())
	for i := range out {
		out[i] = ev.NewField(fields.Get(i)).Message().Interface()
	}
	return out
}

func roundTrip(t *testing.T, m proto.Message) {
	t.Helper()
	data, err := eventjson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(data) {
		t.Fatalf("invalid JSON: %s", data)
	}
	back := m.ProtoReflect().New().Interface()
	if err := eventjson.Unmarshal(data, back); err != nil {
		t.Fatalf("Unmarshal(%s): %v", data, err)
	}
	if !proto.Equal(m, back) {
		t.Errorf("round trip changed the message\n JSON: %s\n want: %v\n  got: %v", data, m, back)
	}
}

// TestAppendJSONDoesNotAllocate writes every event type, fully populated,
// into a buffer that is already large enough.
func TestAppendJSONDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	for _, p := range payloads() {
		ev := stamped(5, p)
		t.Run(events.Type(ev), func(t *testing.T) {
			// Only the empty form of a payload with a list is
			// allocation-free: reading a list through protoreflect
			// allocates its wrapper.
			if !hasList(p.ProtoReflect().Descriptor()) {
				fill(p.ProtoReflect(), 1)
			}
			buf := eventjson.Append(nil, ev)
			if n := testing.AllocsPerRun(20, func() { buf = eventjson.Append(buf[:0], ev) }); n != 0 {
				t.Errorf("Append allocates %v times", n)
			}
		})
	}
}

func hasList(md protoreflect.MessageDescriptor) bool {
	fields := md.Fields()
	for i := range fields.Len() {
		if fields.Get(i).IsList() {
			return true
		}
	}
	return false
}
