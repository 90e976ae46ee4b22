// Command gentypes writes the type switches over Event.payload, so that the
// hot paths need no protoreflect: events/types_gen.go, the table of event
// type names and the switches that map between Event.payload and its wire
// name (New, Type, Filter.Match) or take its message out (payloadOf, for
// the ring buffer), and, with -codec,
// events/eventjson/payload_gen.go, the switch that hands the JSON encoder
// an event's payload.
//
// It reads the compiled descriptor of tack.events.v1.Event, so run it after
// regenerating the protobuf code:
//
//	go generate ./events/...
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"reflect"

	"google.golang.org/protobuf/reflect/protoreflect"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// payload is one member of Event.payload.
type payload struct {
	name    string // wire name: the oneof field name
	msg     string // Go type name of the payload message
	wrapper string // Go type name of the oneof wrapper
	field   string // Go field name of the wrapper
}

func main() {
	out := flag.String("o", "types_gen.go", "output file")
	codec := flag.Bool("codec", false, "write package eventjson's payload switch instead of package events' types")
	flag.Parse()
	gen := generate
	if *codec {
		gen = generateCodec
	}
	src, err := gen()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

// payloads lists the members of Event.payload in declaration order. The Go
// names come from the generated code itself (via reflect), not from a copy
// of protoc-gen-go's naming rules.
func payloads() ([]payload, error) {
	md := (&eventsv1.Event{}).ProtoReflect().Descriptor()
	oneof := md.Oneofs().ByName("payload")
	if oneof == nil {
		return nil, fmt.Errorf("tack.events.v1.Event has no oneof payload")
	}
	var ps []payload
	fields := oneof.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Kind() != protoreflect.MessageKind {
			return nil, fmt.Errorf("payload field %s is not a message", fd.Name())
		}
		ev := &eventsv1.Event{}
		m := ev.ProtoReflect()
		m.Set(fd, protoreflect.ValueOfMessage(m.NewField(fd).Message()))
		wt := reflect.TypeOf(ev.Payload).Elem()
		if wt.NumField() != 1 {
			return nil, fmt.Errorf("oneof wrapper %s has %d fields", wt.Name(), wt.NumField())
		}
		f := wt.Field(0)
		ps = append(ps, payload{
			name:    string(fd.Name()),
			msg:     f.Type.Elem().Name(),
			wrapper: wt.Name(),
			field:   f.Name,
		})
	}
	return ps, nil
}

// generate writes events/types_gen.go.
func generate() ([]byte, error) {
	return file("events", []string{"fmt"}, func(p printer, ps []payload) {
		p("")
		p("// typeNames holds the wire names of the event types in proto order.")
		p("var typeNames = [numTypes]string{")
		for _, x := range ps {
			p("\t%q,", x.name)
		}
		p("}")
		p("")
		p("// Type indexes of the events this package builds itself.")
		p("const (")
		for i, x := range ps {
			if x.name == "events_lost" {
				p("\tidxEventsLost = %d", i)
			}
		}
		p(")")
		p("")
		p("// typeIndex returns the index in typeNames of ev's payload, or -1 when")
		p("// ev is nil or has no payload.")
		p("func typeIndex(ev *eventsv1.Event) int {")
		p("\tif ev == nil {")
		p("\t\treturn -1")
		p("\t}")
		payloadSwitch(p, ps, "ev.Payload", func(i int, _ payload) string { return fmt.Sprint(i) })
		p("\treturn -1")
		p("}")
		p("")
		p("// New wraps payload, one of the event messages of eventsv1 (such as")
		p("// &eventsv1.MessageDelta{Delta: \"x\"}), in an Event. Session, Seq and")
		p("// TsUnixNano are left for Stream.Publish to stamp. New panics when")
		p("// payload is not an event payload type: that is a programmer error.")
		p("func New(payload proto.Message) *eventsv1.Event {")
		p("\tswitch p := payload.(type) {")
		for _, x := range ps {
			p("\tcase *eventsv1.%s:", x.msg)
			p("\t\tb := &struct {")
			p("\t\t\tev eventsv1.Event")
			p("\t\t\tw  eventsv1.%s", x.wrapper)
			p("\t\t}{}")
			p("\t\tb.w.%s = p", x.field)
			p("\t\tb.ev.Payload = &b.w")
			p("\t\treturn &b.ev")
		}
		p("\t}")
		p("\tpanic(fmt.Sprintf(\"events.New: %%T is not an event payload\", payload))")
		p("}")
		p("")
		p("// payloadOf returns the payload message of ev, which New takes back:")
		p("// nil when ev has no payload.")
		p("func payloadOf(ev *eventsv1.Event) proto.Message {")
		payloadSwitch(p, ps, "p := ev.Payload", func(_ int, x payload) string { return "p." + x.field })
		p("\treturn nil")
		p("}")
	})
}

// generateCodec writes events/eventjson/payload_gen.go.
func generateCodec() ([]byte, error) {
	return file("eventjson", nil, func(p printer, ps []payload) {
		p("")
		p("// payloadOf returns the index in events.Types() and the payload message")
		p("// of ev, or -1 and nil when ev has no payload.")
		p("func payloadOf(ev *eventsv1.Event) (int, proto.Message) {")
		payloadSwitch(p, ps, "p := ev.Payload", func(i int, x payload) string { return fmt.Sprintf("%d, p.%s", i, x.field) })
		p("\treturn -1, nil")
		p("}")
	})
}

// payloadSwitch prints a type switch over the Event.payload wrappers
// (switch on), whose case for member i of ps returns ret(i, that member).
func payloadSwitch(p printer, ps []payload, on string, ret func(i int, x payload) string) {
	p("\tswitch %s.(type) {", on)
	for i, x := range ps {
		p("\tcase *eventsv1.%s:", x.wrapper)
		p("\t\treturn %s", ret(i, x))
	}
	p("\t}")
}

// printer writes one line of a generated file.
type printer func(format string, args ...any)

// file writes a generated file of package pkg, which imports the standard
// packages std, proto and eventsv1: its header, numTypes, and what body
// prints for the members of Event.payload; then gofmt-s it.
func file(pkg string, std []string, body func(p printer, ps []payload)) ([]byte, error) {
	ps, err := payloads()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }

	p("// Code generated by events/internal/gentypes from events/v1/events.proto. DO NOT EDIT.")
	p("")
	p("package %s", pkg)
	p("")
	p("import (")
	for _, imp := range std {
		p("\t%q", imp)
	}
	if len(std) > 0 {
		p("")
	}
	p("\t\"google.golang.org/protobuf/proto\"")
	p("")
	p("\teventsv1 \"github.com/tack-run/tack/events/v1\"")
	p(")")
	p("")
	p("// numTypes is the number of members of Event.payload.")
	p("const numTypes = %d", len(ps))
	body(p, ps)
	return formatted(b.Bytes())
}

// formatted returns src gofmt-ed.
func formatted(src []byte) ([]byte, error) {
	out, err := format.Source(src)
	if err != nil {
		return nil, fmt.Errorf("format: %w\n%s", err, src)
	}
	return out, nil
}
