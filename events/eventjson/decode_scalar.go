package eventjson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

func decodeScalar(fd protoreflect.FieldDescriptor, raw json.RawMessage, path string) (protoreflect.Value, error) {
	kind := jsonKind(raw)
	switch fd.Kind() {
	case protoreflect.StringKind:
		var s string
		if kind != '"' || json.Unmarshal(raw, &s) != nil {
			return protoreflect.Value{}, fieldError(path, "expected a string")
		}
		return protoreflect.ValueOfString(s), nil
	case protoreflect.BoolKind:
		if kind != 't' && kind != 'f' {
			return protoreflect.Value{}, fieldError(path, "expected true or false")
		}
		return protoreflect.ValueOfBool(kind == 't'), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := decodeInt(raw, math.MinInt32, math.MaxInt32, path, "int32")
		return protoreflect.ValueOfInt32(int32(n)), err
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, err := decodeInt(raw, math.MinInt64, math.MaxInt64, path, "int64")
		return protoreflect.ValueOfInt64(n), err
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n, err := decodeUint(raw, math.MaxUint32, path, "uint32")
		return protoreflect.ValueOfUint32(uint32(n)), err
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, err := decodeUint(raw, math.MaxUint64, path, "uint64")
		return protoreflect.ValueOfUint64(n), err
	case protoreflect.DoubleKind, protoreflect.FloatKind:
		if !isNumber(kind) {
			return protoreflect.Value{}, fieldError(path, "expected a number")
		}
		bits := 64
		if fd.Kind() == protoreflect.FloatKind {
			bits = 32
		}
		f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), bits)
		if err != nil {
			return protoreflect.Value{}, fieldError(path, "number %s is out of range", bytes.TrimSpace(raw))
		}
		if bits == 32 {
			return protoreflect.ValueOfFloat32(float32(f)), nil
		}
		return protoreflect.ValueOfFloat64(f), nil
	case protoreflect.BytesKind:
		var s string
		if kind != '"' || json.Unmarshal(raw, &s) != nil {
			return protoreflect.Value{}, fieldError(path, "expected a base64 string")
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return protoreflect.Value{}, fieldError(path, "expected a base64 string")
		}
		return protoreflect.ValueOfBytes(b), nil
	case protoreflect.EnumKind:
		if kind == '"' {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				if v := fd.Enum().Values().ByName(protoreflect.Name(s)); v != nil {
					return protoreflect.ValueOfEnum(v.Number()), nil
				}
			}
			return protoreflect.Value{}, fieldError(path, "unknown value %s", raw)
		}
		n, err := decodeInt(raw, math.MinInt32, math.MaxInt32, path, "enum")
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(n)), err
	}
	return protoreflect.Value{}, fieldError(path, "unsupported field kind %v", fd.Kind())
}

func isNumber(kind byte) bool {
	return kind == '-' || kind >= '0' && kind <= '9'
}

// maxExactFloat is the largest integer magnitude below which every integer
// is exactly representable as a float64.
const maxExactFloat = 1 << 53

// decodeInt reads an integer in [lo, hi]. An integral number written with a
// fraction or exponent (2.0, 1e3) is accepted while it is exact.
func decodeInt(raw json.RawMessage, lo, hi int64, path, typ string) (int64, error) {
	if !isNumber(jsonKind(raw)) {
		return 0, fieldError(path, "expected an integer")
	}
	s := string(bytes.TrimSpace(raw))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if !strings.ContainsAny(s, ".eE") {
			return 0, fieldError(path, "%s is out of range for %s", s, typ)
		}
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) {
			return 0, fieldError(path, "expected an integer, got %s", s)
		}
		if math.Abs(f) > maxExactFloat {
			return 0, fieldError(path, "%s is out of range for %s", s, typ)
		}
		n = int64(f)
	}
	if n < lo || n > hi {
		return 0, fieldError(path, "%s is out of range for %s", s, typ)
	}
	return n, nil
}

// decodeUint reads a non-negative integer no greater than hi.
func decodeUint(raw json.RawMessage, hi uint64, path, typ string) (uint64, error) {
	if !isNumber(jsonKind(raw)) {
		return 0, fieldError(path, "expected an integer")
	}
	s := string(bytes.TrimSpace(raw))
	if strings.HasPrefix(s, "-") {
		n, err := decodeInt(raw, math.MinInt64, 0, path, typ)
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, nil
		}
		return 0, fieldError(path, "%s is out of range for %s", s, typ)
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		if !strings.ContainsAny(s, ".eE") {
			return 0, fieldError(path, "%s is out of range for %s", s, typ)
		}
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) {
			return 0, fieldError(path, "expected an integer, got %s", s)
		}
		if f > maxExactFloat {
			return 0, fieldError(path, "%s is out of range for %s", s, typ)
		}
		n = uint64(f)
	}
	if n > hi {
		return 0, fieldError(path, "%s is out of range for %s", s, typ)
	}
	return n, nil
}
