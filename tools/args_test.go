package tools

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// argsSeeds are arguments of every shape, valid and not.
var argsSeeds = []string{
	`{}`, `{"text":"ping"}`, ` { "a" : [ 1 , -2.5e+3 , true , false , null , "x" ] , "b" : { } } `,
	`{"esc":"a\"b\\c\/d\u00e9\ud83d\ude00\n"}`, `{"dup":1,"dup":2}`, `[]`, `[[],[{}]]`, `"s"`, `0`, `-0.0E-0`,
	`12345678901234567890123`, `{"bad utf8":"` + "\xff\xfe" + `"}`, `{"` + "\xc3\xa9" + `":"é"}`,
	``, ` `, `{`, `{"a":}`, `{"a":1,}`, `[1,]`, `{} {}`, `{}x`, `nul`, `01`, `1.`, `"\x"`, `{"a" 1}`, "\"a\nb\"",
	`"\ud800"`, `"\ud800\u0041"`, `"\udc00\ud800\udc00"`, `"\ud800\ud800\udc00x"`, `"\uD83D\uDE00\u00E9\u0000"`,
	`"é` + "\x80" + `\n"`, `"\b\f\r\t\/"`,
}

// checkArgs fails unless decodeArgs gives what jsonschema.UnmarshalJSON
// gives for data: the same value, or an error where it has one.
func checkArgs(t *testing.T, data []byte) {
	want, wantErr := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	got, err := decodeArgs(data)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("decodeArgs(%q) error %v, want %v", data, err, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeArgs(%q) = %#v, want %#v", data, got, want)
	}
}

func TestDecodeArgsAsTheValidator(t *testing.T) {
	for _, s := range argsSeeds {
		checkArgs(t, []byte(s))
	}
}

func FuzzDecodeArgs(f *testing.F) {
	for _, s := range argsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkArgs)
}

func TestDecodeArgsAllocations(t *testing.T) {
	data := []byte(`{"text":"ping"}`)
	if n := testing.AllocsPerRun(100, func() { _, _ = decodeArgs(data) }); n > 5 {
		t.Errorf("decodeArgs took %v allocations, want at most 5 (the map and its slots, the key, the value and its boxing)", n)
	}
}

func BenchmarkDecodeArgs(b *testing.B) {
	data := []byte(`{"path":"src/main.go","old":"fmt.Println(\"hi\")\n","new":"log.Print(\"hi\")\n","count":2}`)
	b.Run("decodeArgs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = decodeArgs(data)
		}
	})
	b.Run("jsonschema.UnmarshalJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = jsonschema.UnmarshalJSON(bytes.NewReader(data))
		}
	})
}
