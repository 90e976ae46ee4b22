package events_test

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// payloadFields lists the members of Event.payload in proto order.
func payloadFields() []protoreflect.FieldDescriptor {
	fields := (&eventsv1.Event{}).ProtoReflect().Descriptor().Oneofs().ByName("payload").Fields()
	out := make([]protoreflect.FieldDescriptor, fields.Len())
	for i := range out {
		out[i] = fields.Get(i)
	}
	return out
}

// newPayload returns a new, empty message of the payload type of fd.
func newPayload(t *testing.T, fd protoreflect.FieldDescriptor) proto.Message {
	t.Helper()
	mt, err := protoregistry.GlobalTypes.FindMessageByName(fd.Message().FullName())
	if err != nil {
		t.Fatal(err)
	}
	return mt.New().Interface()
}

// TestTypeRoundTrip checks every payload of the proto against the
// generated switches: a new event without a case in types_gen.go fails
// here (New panics, or Type disagrees).
func TestTypeRoundTrip(t *testing.T) {
	for _, fd := range payloadFields() {
		name := string(fd.Name())
		t.Run(name, func(t *testing.T) {
			p := newPayload(t, fd)
			ev := events.New(p)
			if got := events.Type(ev); got != name {
				t.Errorf("Type = %q, want %q", got, name)
			}
			m := ev.ProtoReflect()
			if got := m.WhichOneof(fd.ContainingOneof()); got != fd {
				t.Fatalf("New set oneof field %v, want %v", got, fd)
			}
			if got := m.Get(fd).Message().Interface(); got != p {
				t.Errorf("New wrapped %p, want the payload %p itself", got, p)
			}
		})
	}
}

func TestTypes(t *testing.T) {
	var want []string
	for _, fd := range payloadFields() {
		want = append(want, string(fd.Name()))
	}
	got := events.Types()
	if !slices.Equal(got, want) {
		t.Fatalf("Types() = %v, want %v", got, want)
	}
	got[0] = "changed"
	if events.Types()[0] != want[0] {
		t.Error("Types returned a slice aliasing internal state")
	}
}

func TestTypeOfEmpty(t *testing.T) {
	tests := []struct {
		name string
		ev   *eventsv1.Event
	}{
		{"nil", nil},
		{"no payload", &eventsv1.Event{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := events.Type(tt.ev); got != "" {
				t.Errorf("Type = %q, want empty", got)
			}
		})
	}
}

func TestNewPanicsOnNonPayload(t *testing.T) {
	tests := []struct {
		name    string
		payload proto.Message
	}{
		{"envelope", &eventsv1.Event{}},
		{"command", &eventsv1.Prompt{}},
		{"helper message", &eventsv1.Usage{}},
		{"nil", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("New did not panic")
				}
			}()
			events.New(tt.payload)
		})
	}
}

// TestPayloadKeysDoNotCollide guards the flat JSON form: payload fields sit
// beside the envelope's keys, so none may be called type, session, seq or
// ts.
func TestPayloadKeysDoNotCollide(t *testing.T) {
	reserved := []string{"type", "session", "seq", "ts"}
	for _, fd := range payloadFields() {
		fields := fd.Message().Fields()
		for i := range fields.Len() {
			if name := string(fields.Get(i).Name()); slices.Contains(reserved, name) {
				t.Errorf("%s has a field %q, which collides with the envelope in JSON", fd.Name(), name)
			}
		}
	}
}
