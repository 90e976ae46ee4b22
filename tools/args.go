package tools

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// decodeArgs decodes a tool call's arguments, one JSON value, into what
// the schema validator takes: the value jsonschema.UnmarshalJSON gives
// (objects as map[string]any, arrays as []any, numbers as json.Number),
// and its error for data that is not one JSON value.
//
// It does the validator's decoding without its stream decoder, which
// costs a reader, a 512-byte buffer, reflection and a second look for
// trailing data: a tenth of a scripted turn's CPU went to validating the
// arguments, most of it there. json.Valid checks the grammar first, so
// the parse below reads only valid JSON. FuzzDecodeArgs holds it to
// jsonschema.UnmarshalJSON.
func decodeArgs(data []byte) (any, error) {
	if !json.Valid(data) {
		return jsonschema.UnmarshalJSON(bytes.NewReader(data))
	}
	p := argsParser{data: data}
	return p.value(), nil
}

// argsParser reads a value from data, which json.Valid accepted.
type argsParser struct {
	data []byte
	pos  int
}

func (p *argsParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *argsParser) value() any {
	p.skipSpace()
	switch p.data[p.pos] {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		return p.string()
	case 't':
		p.pos += len("true")
		return true
	case 'f':
		p.pos += len("false")
		return false
	case 'n':
		p.pos += len("null")
		return nil
	default:
		return p.number()
	}
}

func (p *argsParser) object() map[string]any {
	m := map[string]any{}
	p.pos++ // {
	for {
		p.skipSpace()
		if p.data[p.pos] == '}' {
			p.pos++
			return m
		}
		if p.data[p.pos] == ',' {
			p.pos++
			p.skipSpace()
		}
		k := p.string()
		p.skipSpace()
		p.pos++ // :
		m[k] = p.value()
	}
}

func (p *argsParser) array() []any {
	a := []any{}
	p.pos++ // [
	for {
		p.skipSpace()
		switch p.data[p.pos] {
		case ']':
			p.pos++
			return a
		case ',':
			p.pos++
		}
		a = append(a, p.value())
	}
}

// string reads a string; p.data[p.pos] is its opening quote.
func (p *argsParser) string() string {
	start := p.pos + 1
	plain := true
	for p.pos++; p.data[p.pos] != '"'; p.pos++ {
		if c := p.data[p.pos]; c == '\\' {
			plain = false
			p.pos++ // the escaped character, which may be a quote
		} else if c >= utf8.RuneSelf {
			plain = false
		}
	}
	body := p.data[start:p.pos]
	p.pos++
	if plain {
		return string(body)
	}
	return unquote(body)
}

// unquote decodes the body of a valid JSON string as encoding/json does:
// escapes decoded, a lone or broken surrogate and each byte that is not
// UTF-8 replaced by U+FFFD.
func unquote(body []byte) string {
	var b strings.Builder
	b.Grow(len(body))
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\' && body[i+1] == 'u':
			r := hex4(body[i+2:])
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 <= len(body) && body[i] == '\\' && body[i+1] == 'u' {
					if pair := utf16.DecodeRune(r, hex4(body[i+2:])); pair != unicode.ReplacementChar {
						b.WriteRune(pair)
						i += 6
						continue
					}
				}
				r = unicode.ReplacementChar
			}
			b.WriteRune(r)
		case c == '\\':
			b.WriteByte(unescaped[body[i+1]])
			i += 2
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRune(body[i:])
			b.WriteRune(r) // utf8.RuneError, U+FFFD, for a byte that is not UTF-8
			i += size
		}
	}
	return b.String()
}

// unescaped is what each single-character escape stands for.
var unescaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// hex4 decodes the four hex digits a \u escape has.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// number reads a number as json.Number: the JSON text of it.
func (p *argsParser) number() json.Number {
	start := p.pos
	for p.pos < len(p.data) && isNumberByte(p.data[p.pos]) {
		p.pos++
	}
	return json.Number(p.data[start:p.pos])
}

func isNumberByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}
