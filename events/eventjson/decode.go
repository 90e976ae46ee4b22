package eventjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tack-run/tack/internal/strictjson"
)

// Unmarshal resets m and fills it from data, a JSON object whose keys
// are m's proto field names, such as the fields of a `tack rpc` command:
//
//	{"text":"stop","interrupt_tools":false}
//
// A key that is not a field of m is an error, at any depth, so that a
// misspelt option is never silently ignored: a *UnknownFieldError such as
// `unknown field "kill_tool"` or `unknown field "x" in plugins[0]`. A
// caller whose objects carry keys of its own (a command line's cmd and id)
// takes them off first and calls UnmarshalObject. A JSON null is the
// same as an absent key, so an optional
// field (Steer.interrupt_tools) is set only when the key is present with a
// value. Repeated fields take arrays, message fields objects, and RawJSON
// fields any JSON value, kept verbatim (but for invalid UTF-8, which becomes
// U+FFFD as in strings). Numbers must be integers that fit an
// integer field. An Event is read in the form Append writes (type,
// session, seq and ts beside the payload's fields), so Unmarshal reads
// back what AppendMessage writes.
//
// A value of the wrong JSON type is an error naming the field, such as
// `field "text": expected a string` or `field "plugins[0].name": expected a
// string`; unparseable JSON is an error too.
func Unmarshal(data []byte, m proto.Message) error {
	proto.Reset(m)
	rm := m.ProtoReflect()
	mp, err := planFor(rm.Descriptor())
	if err != nil {
		return err
	}
	if mp.shape == shapeRawJSON {
		if !json.Valid(data) {
			return errors.New("invalid JSON")
		}
		if jsonKind(data) != 'n' {
			rm.Set(mp.fields[0].fd, protoreflect.ValueOfBytes(rawBytes(data)))
		}
		return nil
	}
	obj, err := ParseObject(data)
	if err != nil {
		return err
	}
	return decodeObject(rm, mp, obj, "")
}

// ParseObject splits data, one JSON object, into its keys and their raw
// values, with Unmarshal's errors for anything else: `invalid JSON:
// ...` or `expected a JSON object`.
func ParseObject(data []byte) (map[string]json.RawMessage, error) {
	if jsonKind(data) != '{' {
		if !json.Valid(data) {
			return nil, errors.New("invalid JSON")
		}
		return nil, errors.New("expected a JSON object")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	return obj, nil
}

// UnmarshalObject is Unmarshal for an object already split into
// its keys, as ParseObject returns it. m is not a RawJSON.
func UnmarshalObject(obj map[string]json.RawMessage, m proto.Message) error {
	proto.Reset(m)
	rm := m.ProtoReflect()
	mp, err := planFor(rm.Descriptor())
	if err != nil {
		return err
	}
	if mp.shape == shapeRawJSON {
		return errors.New("UnmarshalObject: RawJSON takes any JSON value, not an object's keys")
	}
	return decodeObject(rm, mp, obj, "")
}

// UnknownFieldError is the error for a key that names no field: Field is
// the key, In the path of the object holding it ("" for the outermost),
// and Within re-roots it, so that a caller can name the command
// (`unknown field "x" in create_session.plugins[0]`).
type UnknownFieldError = strictjson.UnknownFieldError

// unknownField returns an *UnknownFieldError for the first key of obj, in
// sorted order, that known rejects, or nil.
func unknownField(obj map[string]json.RawMessage, path string, known func(string) bool) error {
	first, found := "", false
	for k := range obj {
		if !known(k) && (!found || k < first) {
			first, found = k, true
		}
	}
	if !found {
		return nil
	}
	return &UnknownFieldError{Field: first, In: path}
}

// fieldError is a decoding error about the field at path.
func fieldError(path, format string, args ...any) error {
	return fmt.Errorf("field %q: %s", path, fmt.Sprintf(format, args...))
}

// jsonKind returns the first byte of the JSON value in data ('{', '[', '"',
// 't', 'f', 'n', or a digit or '-'), or 0 for no value.
func jsonKind(data []byte) byte {
	data = bytes.TrimLeft(data, " \t\r\n")
	if len(data) == 0 {
		return 0
	}
	return data[0]
}

func joinPath(path, name string) string { return strictjson.Join(path, name) }

// rawBytes returns the JSON value raw as RawJSON keeps it: verbatim, but
// for surrounding space and invalid UTF-8 (which becomes U+FFFD, as in
// strings).
func rawBytes(raw []byte) []byte {
	raw = bytes.TrimSpace(raw)
	if !utf8.Valid(raw) {
		return bytes.ToValidUTF8(raw, []byte("\uFFFD"))
	}
	return bytes.Clone(raw)
}

// decodeValue fills m, of plan mp, from the JSON value raw.
func decodeValue(m protoreflect.Message, mp *msgPlan, raw json.RawMessage, path string) error {
	if mp.shape == shapeRawJSON {
		m.Set(mp.fields[0].fd, protoreflect.ValueOfBytes(rawBytes(raw)))
		return nil
	}
	if jsonKind(raw) != '{' {
		return fieldError(path, "expected an object")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return fieldError(path, "%v", err)
	}
	return decodeObject(m, mp, obj, path)
}

func decodeObject(m protoreflect.Message, mp *msgPlan, obj map[string]json.RawMessage, path string) error {
	if mp.shape == shapeEvent {
		return decodeEvent(m, obj, path)
	}
	n, err := decodeFields(m, mp, obj, path)
	if err != nil || n == len(obj) {
		return err
	}
	return unknownField(obj, path, mp.has)
}

// decodeFields fills m's fields from obj and returns how many of obj's
// keys they took.
func decodeFields(m protoreflect.Message, mp *msgPlan, obj map[string]json.RawMessage, path string) (int, error) {
	n := 0
	for i := range mp.fields {
		f := &mp.fields[i]
		raw, ok := obj[f.name]
		if !ok {
			continue
		}
		n++
		if jsonKind(raw) == 'n' {
			continue
		}
		if err := decodeField(m, f, raw, joinPath(path, f.name)); err != nil {
			return n, err
		}
	}
	return n, nil
}

// eventKeys are the keys of the event form beside the payload's fields.
var eventKeys = []string{"type", "session", "seq", "ts"}

// decodeEvent reads the event form: type, session, seq, ts and the payload
// fields side by side in one object.
func decodeEvent(m protoreflect.Message, obj map[string]json.RawMessage, path string) error {
	fields := eventDesc.Fields()
	for _, name := range []string{"session", "seq"} {
		raw, ok := obj[name]
		if !ok || jsonKind(raw) == 'n' {
			continue
		}
		fd := fields.ByName(protoreflect.Name(name))
		f := &fieldPlan{fd: fd, name: name}
		if err := decodeField(m, f, raw, joinPath(path, name)); err != nil {
			return err
		}
	}
	if raw, ok := obj["ts"]; ok && jsonKind(raw) != 'n' {
		var s string
		if jsonKind(raw) != '"' || json.Unmarshal(raw, &s) != nil {
			return fieldError(joinPath(path, "ts"), "expected an RFC 3339 time string")
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return fieldError(joinPath(path, "ts"), "expected an RFC 3339 time string")
		}
		m.Set(fields.ByName("ts_unix_nano"), protoreflect.ValueOfInt64(t.UnixNano()))
	}
	var name string
	if raw, ok := obj["type"]; ok && jsonKind(raw) != 'n' {
		if jsonKind(raw) != '"' || json.Unmarshal(raw, &name) != nil {
			return fieldError(joinPath(path, "type"), "expected a string")
		}
	}
	// An event without payload (no type, or "" as Append writes it)
	// has the header keys only.
	known := func(k string) bool { return slices.Contains(eventKeys, k) }
	if name != "" {
		idx, ok := typeIndexes[name]
		if !ok {
			return fieldError(joinPath(path, "type"), "unknown event type %q", name)
		}
		fd := payloadDesc.Fields().Get(idx)
		mp := payloadPlans[idx]
		if _, err := decodeFields(m.Mutable(fd).Message(), mp, obj, path); err != nil {
			return err
		}
		known = func(k string) bool { return slices.Contains(eventKeys, k) || mp.has(k) }
	}
	return unknownField(obj, path, known)
}

func decodeField(m protoreflect.Message, f *fieldPlan, raw json.RawMessage, path string) error {
	if !f.fd.IsList() {
		if f.fd.Message() != nil {
			return decodeValue(m.Mutable(f.fd).Message(), f.msg, raw, path)
		}
		v, err := decodeScalar(f.fd, raw, path)
		if err != nil {
			return err
		}
		m.Set(f.fd, v)
		return nil
	}
	if jsonKind(raw) != '[' {
		return fieldError(path, "expected an array")
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return fieldError(path, "%v", err)
	}
	l := m.Mutable(f.fd).List()
	for i, e := range elems {
		ep := path + "[" + strconv.Itoa(i) + "]"
		if f.fd.Message() != nil {
			if jsonKind(e) == 'n' && f.msg.shape != shapeRawJSON {
				return fieldError(ep, "expected an object")
			}
			v := l.NewElement()
			if err := decodeValue(v.Message(), f.msg, e, ep); err != nil {
				return err
			}
			l.Append(v)
			continue
		}
		v, err := decodeScalar(f.fd, e, ep)
		if err != nil {
			return err
		}
		l.Append(v)
	}
	return nil
}
