package spec

import (
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
)

// everySetting is a new Session with every setting set, none of its
// strings, slices or pointers shared with another's.
func everySetting() *Session {
	return &Session{ID: "s-1", Model: "script:m", Script: json.RawMessage(`{"turns":[]}`), System: "be brief",
		Tools: []string{"read_file"}, Plugins: []plugins.Config{{Name: "loop", Config: json.RawMessage(`{"n":3}`)}},
		User: "ann", Context: &llm.ContextConfig{MaxMessages: 4, KeepRecent: new(2)},
		Subagents: &Subagents{MaxDepth: new(2), Tools: []string{"a"}, InheritPlugins: new(true)},
		QueueMode: events.QueueAll, Agent: "helper"}
}

// TestShareSharesEqualConfigurations: Sessions that differ only by ID,
// with none of their strings, slices or pointers in common, get one
// Session, with no ID.
func TestShareSharesEqualConfigurations(t *testing.T) {
	a, b := everySetting(), everySetting()
	b.ID = "s-2"
	pa, pb := Share(a), Share(b)
	if pa != pb {
		t.Fatal("two equal configurations were not shared")
	}
	if pa.ID != "" || pa == a {
		t.Fatalf("shared %+v: want a copy with no ID", pa)
	}
	if Share(pa) != pa {
		t.Fatal("sharing a shared Session gave another")
	}
	if Share(nil) != Share(&Session{}) {
		t.Fatal("nil is not the zero Session")
	}
}

// TestShareTellsEverySettingApart changes each field of a Session, and of
// the structs it points to, in turn: none of them may be shared with the
// Session before. A field added to any of them without being compared
// fails here.
func TestShareTellsEverySettingApart(t *testing.T) {
	for _, c := range changes(t) {
		base := Share(everySetting())
		if got := Share(c.s); got == base {
			t.Errorf("a Session with another %s was shared with the first", c.what)
		}
	}
}

type change struct {
	what string
	s    *Session
}

// changes is everySetting() with one field changed, for each field of Session,
// llm.ContextConfig and Subagents but Session's ID.
func changes(t *testing.T) []change {
	var out []change
	n := reflect.TypeFor[Session]().NumField()
	for i := range n {
		f := reflect.TypeFor[Session]().Field(i)
		if f.Name == "ID" {
			continue
		}
		s := everySetting()
		v := reflect.ValueOf(s).Elem().Field(i)
		switch f.Name {
		case "Context":
			out = append(out, nested(t, "Context", func(s *Session) reflect.Value { return reflect.ValueOf(s.Context).Elem() })...)
		case "Subagents":
			out = append(out, nested(t, "Subagents", func(s *Session) reflect.Value { return reflect.ValueOf(s.Subagents).Elem() })...)
		}
		v.Set(reflect.Zero(f.Type))
		out = append(out, change{f.Name + " (zero)", s})
	}
	return out
}

// nested changes each field of the struct at(s) points to in everySetting().
func nested(t *testing.T, name string, at func(*Session) reflect.Value) []change {
	var out []change
	typ := at(everySetting()).Type()
	for i := range typ.NumField() {
		s := everySetting()
		v := at(s).Field(i)
		if !other(v) {
			t.Fatalf("%s.%s: the test cannot change a %s", name, typ.Field(i).Name, v.Type())
		}
		out = append(out, change{name + "." + typ.Field(i).Name, s})
	}
	return out
}

// other sets v to a value unlike everySetting()'s: nil for a pointer or slice that
// is set, something else for a value.
func other(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Slice:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
			return v.Kind() == reflect.Pointer
		}
		v.Set(reflect.Zero(v.Type()))
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + 7)
	case reflect.Float64:
		v.SetFloat(v.Float() + 7)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	default:
		return false
	}
	return true
}

// TestShareForgets: a configuration no session holds any more is dropped.
func TestShareForgets(t *testing.T) {
	s := everySetting()
	s.System = "a prompt only this test uses"
	Share(s)
	k := shareKey{model: s.Model, system: s.System, user: s.User, agent: s.Agent}
	// Cleanups run on a goroutine of their own after a collection.
	eventually.Within(t, 10*time.Second, func() error {
		runtime.GC()
		shared.Lock()
		defer shared.Unlock()
		if _, ok := shared.m[k]; ok {
			return errors.New("the entry of a Session nobody holds was kept")
		}
		return nil
	})
}
