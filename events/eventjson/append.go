package eventjson

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// This file holds the JSON value writers shared by the encoders. They
// produce what encoding/json produces with SetEscapeHTML(false).

const hexDigits = "0123456789abcdef"

// safeASCII[b] is true when the ASCII byte b needs no escaping in a JSON
// string.
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, and
// U+2028 and U+2029 are escaped, as encoding/json does, so the output is
// valid UTF-8 and safe to embed in JavaScript.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if safeASCII[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendFloat appends f as a JSON number the way encoding/json formats it,
// or null for NaN and ±Inf, which JSON cannot represent.
func appendFloat(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) ||
			bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// tsLayout is the event timestamp format: RFC 3339 in UTC with exactly six
// fractional digits.
const tsLayout = "2006-01-02T15:04:05.000000Z"

// Timestamp writes t the way an event's ts is written: RFC 3339 in UTC
// with exactly six fractional digits (2026-11-24T10:00:00.123456Z). Other
// times in the protocol (list_sessions' updated_at) use it too.
func Timestamp(t time.Time) string { return t.UTC().Format(tsLayout) }

// appendTimestamp appends the UTC time of unixNano in tsLayout, without
// quotes. It formats by hand: time.AppendFormat parses the layout on every
// call, and this is on every event's path.
func appendTimestamp(dst []byte, unixNano int64) []byte {
	t := time.Unix(0, unixNano).UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(dst, tsLayout)
	}
	hour, minute, sec := t.Clock()
	micro := t.Nanosecond() / 1000
	n := len(dst)
	dst = append(dst, tsLayout...)
	b := dst[n : n+len(tsLayout)]
	put2(b[0:], year/100)
	put2(b[2:], year%100)
	put2(b[5:], int(month))
	put2(b[8:], day)
	put2(b[11:], hour)
	put2(b[14:], minute)
	put2(b[17:], sec)
	put2(b[20:], micro/10000)
	put2(b[22:], micro/100%100)
	put2(b[24:], micro%100)
	return dst
}

// twoDigits holds "00" to "99".
const twoDigits = "" +
	"00010203040506070809" + "10111213141516171819" +
	"20212223242526272829" + "30313233343536373839" +
	"40414243444546474849" + "50515253545556575859" +
	"60616263646566676869" + "70717273747576777879" +
	"80818283848586878889" + "90919293949596979899"

// put2 writes v (0 ≤ v < 100) as two digits at b[0:2].
func put2(b []byte, v int) {
	_ = b[1]
	b[0], b[1] = twoDigits[2*v], twoDigits[2*v+1]
}
