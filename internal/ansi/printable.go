package ansi

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Printable returns s with nothing left that would steer a terminal:
// what a model writes, a tool prints or a provider answers is shown, not
// obeyed. A terminal takes an escape sequence (ESC, or the 8-bit CSI
// U+009B) as an order — write the clipboard (OSC 52), move the cursor
// back over an approval request and print another, hide what follows —
// and a bidirectional override or a backspace shows a command other than
// the one that runs. Line feeds and tabs stay; a carriage return goes
// (a CRLF ends a line as an LF does, and a lone one would let text
// overwrite its own line); every other control shows as ^X (C0 and DEL,
// as cat -v shows them) or <U+XXXX> (C1 and the bidirectional controls),
// and a byte that is not UTF-8 as U+FFFD. s itself is returned when it
// holds none of these.
func Printable(s string) string {
	i := strings.IndexFunc(s, steers)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for _, r := range s[i:] { // an invalid byte ranges as U+FFFD
		switch {
		case r == '\r':
		case r == utf8.RuneError:
			b.WriteRune(r)
		case !steers(r):
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			b.WriteByte('^')
			b.WriteByte(byte(r) ^ 0x40)
		default:
			fmt.Fprintf(&b, "<U+%04X>", r)
		}
	}
	return b.String()
}

// steers reports whether r is a control Printable does not let through:
// C0 but line feed and tab, DEL, C1, the bidirectional marks, overrides
// and isolates, and the U+FFFD an invalid byte ranges as.
func steers(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return r == utf8.RuneError
}

// PrintableMessage returns m with Printable applied to every string and
// bytes field, at any depth: a copy when something changed, m itself
// when nothing needed to. A view prints an event's text through it
// whatever field the text comes from.
func PrintableMessage[M proto.Message](m M) M {
	if !needsCleaning(m.ProtoReflect()) {
		return m
	}
	c := proto.Clone(m).(M)
	clean(c.ProtoReflect())
	return c
}

// needsCleaning reports whether a string or bytes field of m, at any
// depth, holds what Printable changes.
func needsCleaning(m protoreflect.Message) bool {
	found := false
	walk(m, func(s string) string {
		found = found || strings.IndexFunc(s, steers) >= 0
		return s
	})
	return found
}

// clean applies Printable to every string and bytes field of m.
func clean(m protoreflect.Message) { walk(m, Printable) }

// walk calls f with every string and bytes field of m, at any depth, and
// sets the field to what f returns when it differs.
func walk(m protoreflect.Message, f func(string) string) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				if nv, ok := walkValue(fd, l.Get(i), f); ok {
					l.Set(i, nv)
				}
			}
		case fd.IsMap():
			mp := v.Map()
			mp.Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if nv, ok := walkValue(fd.MapValue(), mv, f); ok {
					mp.Set(k, nv)
				}
				return true
			})
		default:
			if nv, ok := walkValue(fd, v, f); ok {
				m.Set(fd, nv)
			}
		}
		return true
	})
}

// walkValue is walk for one value of field fd: the value f made of it,
// and whether it changed (a message is changed in place).
func walkValue(fd protoreflect.FieldDescriptor, v protoreflect.Value, f func(string) string) (protoreflect.Value, bool) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		if s := f(v.String()); s != v.String() {
			return protoreflect.ValueOfString(s), true
		}
	case protoreflect.BytesKind:
		if s := f(string(v.Bytes())); s != string(v.Bytes()) {
			return protoreflect.ValueOfBytes([]byte(s)), true
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		walk(v.Message(), f)
	}
	return v, false
}
