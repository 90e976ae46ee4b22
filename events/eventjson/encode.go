package eventjson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Append appends the JSON-lines form of ev (docs/protocol.md), without a
// trailing newline, and returns the extended buffer:
//
//	{"type":"message_delta","session":"s1","seq":14,"ts":"2026-11-21T10:00:00.123456Z","delta":"Hi"}
//
// type is the wire name of the payload (see events.Type), ts is ts_unix_nano
// in UTC with exactly six fractional digits, and the payload's fields follow in
// proto declaration order, keyed by proto field name. Every field is always
// present:
//   - unset proto3 optional scalars and unset message fields are null;
//   - repeated fields are arrays, [] when empty;
//   - integers of every width are JSON numbers; doubles are numbers, and
//     null when NaN or infinite;
//   - strings are escaped as encoding/json does (without HTML escaping);
//     invalid UTF-8 becomes U+FFFD;
//   - RawJSON is written verbatim (null when empty). Line breaks between
//     its tokens are removed so the output stays one line, invalid UTF-8
//     becomes U+FFFD, and bytes that are not valid JSON are written as a
//     JSON string instead;
//   - a conversation Message has its per-role shape (see AppendMessage);
//   - a nested Event (sub_agent_event.event) is written in this form.
//
// A nil ev is written as null; an Event without payload has type "".
// Append allocates nothing beyond growing dst, except for non-empty
// repeated fields of scalars (protoreflect boxes them; only rare events
// have any) and to repair RawJSON that spans lines or is not valid UTF-8 or
// JSON.
func Append(dst []byte, ev *eventsv1.Event) []byte {
	if ev == nil {
		return append(dst, "null"...)
	}
	idx, payload := payloadOf(ev)
	if idx < 0 {
		dst = append(dst, `{"type":"","session":`...)
	} else {
		dst = append(dst, eventPrefix[idx]...)
	}
	dst = appendString(dst, ev.GetSession())
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendUint(dst, ev.GetSeq(), 10)
	dst = append(dst, `,"ts":"`...)
	dst = appendTimestamp(dst, ev.GetTsUnixNano())
	dst = append(dst, '"')
	if idx >= 0 {
		dst = appendFields(dst, payload.ProtoReflect(), payloadPlans[idx], false)
	}
	return append(dst, '}')
}

// AppendMessage appends the JSON form of m and returns the extended
// buffer. The rules are those of Append, applied to any message, which
// is how command replies are written: a SessionState gives the get_state
// object of docs/protocol.md, a MessageList {"messages":[...]}, an EventList
// {"events":[...]} with each event in event form. Members of a oneof other
// than Event.payload are written only when set.
//
// A conversation Message is written per role:
//
//	{"role":"user","content":"..."}
//	{"role":"assistant","content":"...","thinking":"...","tool_calls":[{"id":"c-1","name":"sleep","args":{"ms":10}}]}
//	{"role":"tool","tool_call_id":"c-1","content":"...","is_error":false}
//
// where an assistant's thinking and tool_calls appear only when non-empty;
// any other role is written like user. The error reports a message type the
// encoder cannot write (one with a map field); every message of eventsv1 can
// be written. On error dst is returned unchanged.
func AppendMessage(dst []byte, m proto.Message) ([]byte, error) {
	if ev, ok := m.(*eventsv1.Event); ok {
		return Append(dst, ev), nil
	}
	rm := m.ProtoReflect()
	mp, err := planFor(rm.Descriptor())
	if err != nil {
		return dst, err
	}
	return appendMessage(dst, rm, mp), nil
}

// Marshal returns the JSON form of m (see AppendMessage).
func Marshal(m proto.Message) ([]byte, error) {
	return AppendMessage(nil, m)
}

func appendMessage(dst []byte, m protoreflect.Message, mp *msgPlan) []byte {
	switch mp.shape {
	case shapeRawJSON:
		if raw, ok := m.Interface().(*eventsv1.RawJSON); ok {
			return appendRaw(dst, raw.GetJson())
		}
		return appendRaw(dst, m.Get(mp.fields[0].fd).Bytes())
	case shapeEvent:
		if ev, ok := m.Interface().(*eventsv1.Event); ok {
			return Append(dst, ev)
		}
	case shapeMessage:
		if msg, ok := m.Interface().(*eventsv1.Message); ok {
			return appendConversation(dst, msg)
		}
	}
	dst = append(dst, '{')
	dst = appendFields(dst, m, mp, true)
	return append(dst, '}')
}

// appendFields appends the fields of m as "key":value pairs, each led by a
// comma unless first.
func appendFields(dst []byte, m protoreflect.Message, mp *msgPlan, first bool) []byte {
	for i := range mp.fields {
		f := &mp.fields[i]
		if f.oneof && !m.Has(f.fd) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, f.key...)
		dst = appendField(dst, m, f)
	}
	return dst
}

func appendField(dst []byte, m protoreflect.Message, f *fieldPlan) []byte {
	if f.fd.IsList() {
		if !m.Has(f.fd) {
			return append(dst, '[', ']') // Get would allocate a List
		}
		l := m.Get(f.fd).List()
		dst = append(dst, '[')
		for i := range l.Len() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, l.Get(i), f)
		}
		return append(dst, ']')
	}
	if f.nullable && !m.Has(f.fd) {
		return append(dst, "null"...)
	}
	return appendValue(dst, m.Get(f.fd), f)
}

func appendValue(dst []byte, v protoreflect.Value, f *fieldPlan) []byte {
	switch f.fd.Kind() {
	case protoreflect.StringKind:
		return appendString(dst, v.String())
	case protoreflect.BoolKind:
		return strconv.AppendBool(dst, v.Bool())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return strconv.AppendInt(dst, v.Int(), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind,
		protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return strconv.AppendUint(dst, v.Uint(), 10)
	case protoreflect.DoubleKind:
		return appendFloat(dst, v.Float(), 64)
	case protoreflect.FloatKind:
		return appendFloat(dst, v.Float(), 32)
	case protoreflect.BytesKind:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v.Bytes())
		return append(dst, '"')
	case protoreflect.EnumKind:
		if ev := f.fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return appendString(dst, string(ev.Name()))
		}
		return strconv.AppendInt(dst, int64(v.Enum()), 10)
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return appendMessage(dst, v.Message(), f.msg)
	}
	return append(dst, "null"...)
}

// appendRaw appends a RawJSON value: verbatim when it is one valid JSON
// value on one line, compacted when it spans lines (JSON lines must not),
// with invalid UTF-8 replaced by U+FFFD, and as a JSON string when it is not
// valid JSON.
func appendRaw(dst, raw []byte) []byte {
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	if !json.Valid(raw) {
		return appendString(dst, string(raw))
	}
	if !utf8.Valid(raw) {
		// Invalid bytes can only sit inside strings of valid JSON.
		raw = bytes.ToValidUTF8(raw, []byte("\uFFFD"))
	}
	if bytes.IndexAny(raw, "\r\n") < 0 {
		return append(dst, raw...)
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		return appendString(dst, string(raw))
	}
	return buf.Bytes()
}

// appendConversation appends a conversation message in its per-role shape.
func appendConversation(dst []byte, msg *eventsv1.Message) []byte {
	role := msg.GetRole()
	dst = append(dst, `{"role":`...)
	dst = appendString(dst, role)
	switch role {
	case "tool":
		dst = append(dst, `,"tool_call_id":`...)
		dst = appendString(dst, msg.GetToolCallId())
		dst = append(dst, `,"content":`...)
		dst = appendString(dst, msg.GetContent())
		dst = append(dst, `,"is_error":`...)
		dst = strconv.AppendBool(dst, msg.GetIsError())
	case "assistant":
		dst = append(dst, `,"content":`...)
		dst = appendString(dst, msg.GetContent())
		if t := msg.GetThinking(); t != "" {
			dst = append(dst, `,"thinking":`...)
			dst = appendString(dst, t)
		}
		if calls := msg.GetToolCalls(); len(calls) > 0 {
			tc := staticPlans[calls[0].ProtoReflect().Descriptor()]
			dst = append(dst, `,"tool_calls":[`...)
			for i, c := range calls {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendMessage(dst, c.ProtoReflect(), tc)
			}
			dst = append(dst, ']')
		}
	default:
		dst = append(dst, `,"content":`...)
		dst = appendString(dst, msg.GetContent())
		if imgs := msg.GetImages(); len(imgs) > 0 {
			dst = append(dst, `,"images":[`...)
			for i, img := range imgs {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, `{"url":`...)
				dst = appendString(dst, img.GetUrl())
				if d := img.GetDetail(); d != "" {
					dst = append(dst, `,"detail":`...)
					dst = appendString(dst, d)
				}
				dst = append(dst, '}')
			}
			dst = append(dst, ']')
		}
	}
	if msg.GetSummary() {
		dst = append(dst, `,"summary":true`...)
	}
	if msg.GetCompacted() {
		dst = append(dst, `,"compacted":true`...)
	}
	if msg.GetRolledBack() {
		dst = append(dst, `,"rolled_back":true`...)
	}
	return append(dst, '}')
}
