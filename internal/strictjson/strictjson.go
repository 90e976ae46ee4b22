package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Decode decodes data, one JSON value, into v, a non-nil pointer. A key
// that is not a field of the struct it lands in is an error such as
// *UnknownFieldError such as `unknown field "x"` or `unknown field "x" in
// turns[0]`; data after the value is an error too. Fields absent from data keep what v holds.
func Decode(data []byte, v any) error {
	var generic any
	if json.Unmarshal(data, &generic) == nil {
		if err := unknown(generic, reflect.TypeOf(v), ""); err != nil {
			return err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the object")
	}
	return nil
}

// UnknownFieldError is the error for a key that names no field.
type UnknownFieldError struct {
	// Field is the key.
	Field string
	// In is the path of the object that holds it, such as "turns[0]" or
	// "plugins[1].config"; "" for the outermost object.
	In string
}

// Error reads `unknown field "x"` or `unknown field "x" in turns[0]`.
func (e *UnknownFieldError) Error() string {
	if e.In == "" {
		return fmt.Sprintf("unknown field %q", e.Field)
	}
	return fmt.Sprintf("unknown field %q in %s", e.Field, e.In)
}

// Within returns the error as seen from an enclosing object in which
// this one's outermost object is at path: In "turns[0]" within "script"
// becomes "script.turns[0]".
func (e *UnknownFieldError) Within(path string) *UnknownFieldError {
	return &UnknownFieldError{Field: e.Field, In: Join(path, e.In)}
}

// Join appends key, or a path that starts with a key, to path.
func Join(path, key string) string {
	switch {
	case path == "":
		return key
	case key == "":
		return path
	}
	return path + "." + key
}

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// unknown returns the error for the first key of v, a decoded JSON value,
// that names no field of t; path is where v is.
func unknown(v any, t reflect.Type, path string) error {
	if t.Implements(unmarshaler) || reflect.PointerTo(t).Implements(unmarshaler) {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
		if t.Implements(unmarshaler) || reflect.PointerTo(t).Implements(unmarshaler) {
			return nil
		}
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil // a type error, which the decoder reports
		}
		fields := jsonFields(t)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			ft, ok := fields[k]
			if !ok {
				return &UnknownFieldError{Field: k, In: path}
			}
			if err := unknown(obj[k], ft, Join(path, k)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		elems, _ := v.([]any)
		for i, e := range elems {
			if err := unknown(e, t.Elem(), path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case reflect.Map:
		obj, _ := v.(map[string]any)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := unknown(obj[k], t.Elem(), Join(path, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// fieldsOf caches jsonFields by type: the reflection it takes cost a
// fifth of a session's creation (its script is decoded with Decode).
var fieldsOf sync.Map // reflect.Type → map[string]reflect.Type

// jsonFields maps the JSON keys of struct t to their field types,
// following encoding/json's rules for tags and embedded structs. The map
// is shared: read only.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldsOf.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	f, _ := fieldsOf.LoadOrStore(t, structFields(t))
	return f.(map[string]reflect.Type)
}

// structFields is jsonFields without the cache.
func structFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && f.Tag.Get("json") == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				continue // its fields are among VisibleFields
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, taken := fields[name]; !taken || len(f.Index) == 1 {
			fields[name] = f.Type
		}
	}
	return fields
}
