package tools

import (
	"testing"
)

// plainSchemas are argument schemas, plain and not, for the tests below.
var plainSchemas = map[string]bool{
	`{"type":"object","properties":{"text":{"type":"string","description":"The text."}},"required":["text"]}`:                             true,
	`{"type":"object","properties":{"ms":{"type":"integer"},"ok":{"type":"boolean"},"x":{"type":"number"}},"additionalProperties":false}`: true,
	`{"type":"object","properties":{"a":{},"b":{}},"required":["b","a"],"title":"two"}`:                                                   true,
	`{"type":"object"}`: true,
	`{"type":"object","properties":{"ms":{"type":"integer","minimum":0}}}`:                      false,
	`{"type":"object","properties":{"s":{"type":"string","enum":["a","b"]}}}`:                   false,
	`{"type":"object","properties":{"s":{"type":["string","null"]}}}`:                           false,
	`{"type":"object","properties":{"o":{"type":"object"}}}`:                                    false,
	`{"type":"object","properties":{"s":true}}`:                                                 false,
	`{"type":"object","additionalProperties":{"type":"string"}}`:                                false,
	`{"type":"object","$defs":{"x":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/x"}}}`: false,
	`{"type":"object","minProperties":1}`:                                                       false,
}

// TestPlainSchema: which schemas are plain, and that a plain schema's
// verdict is the validator's for args of every kind: missing, extra, of
// each type, integers written with a fraction or an exponent (left to the
// validator, which takes 10.0 as an integer).
func TestPlainSchema(t *testing.T) {
	for raw, want := range plainSchemas {
		_, p, err := compileSchema("t", []byte(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got := p != nil; got != want {
			t.Errorf("%s: plain %v, want %v", raw, got, want)
		}
	}
	_, p, _ := compileSchema("t", []byte(`{"type":"object","properties":{"ms":{"type":"integer"},"ok":{"type":"boolean"},"x":{"type":"number"},"s":{"type":"string"}},"required":["ms"],"additionalProperties":false}`))
	for args, want := range map[string]bool{
		`{"ms":1}`: true, `{"ms":-7,"ok":false,"x":1.5e3,"s":""}`: true,
		`{}`: false, `{"ms":1,"extra":1}`: false, `{"ms":"1"}`: false, `{"ms":1.5}`: false, `{"ms":null}`: false,
		`{"ms":10.0}`: false, `{"ms":1e3}`: false, `{"ms":1,"ok":"true"}`: false, `{"ms":1,"x":"1"}`: false, `{"ms":1,"s":2}`: false,
	} {
		v, err := decodeArgs([]byte(args))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.passes(v.(map[string]any)); got != want {
			t.Errorf("%s: passes %v, want %v", args, got, want)
		}
	}
}

// FuzzPlainSchema: args a plain schema passes, the validator passes too.
func FuzzPlainSchema(f *testing.F) {
	for _, s := range argsSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{`{"ms":1}`, `{"text":"x"}`, `{"ms":1,"ok":true,"x":2,"text":"y","a":null,"b":[1]}`, `{"ms":1e2}`, `{"x":-0}`} {
		f.Add([]byte(s))
	}
	type compiled struct {
		raw string
		e   *entry
	}
	var schemas []compiled
	for raw, isPlain := range plainSchemas {
		if !isPlain {
			continue
		}
		sch, p, err := compileSchema("t", []byte(raw))
		if err != nil {
			f.Fatal(err)
		}
		schemas = append(schemas, compiled{raw, &entry{schema: sch, plain: p}})
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := decodeArgs(data)
		if err != nil {
			return
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		for _, c := range schemas {
			if c.e.plain.passes(obj) {
				if err := c.e.schema.Validate(v); err != nil {
					t.Fatalf("%s passes %s, which the validator refuses: %v", data, c.raw, err)
				}
			}
		}
	})
}

// BenchmarkValidate validates echo's arguments against its schema, plain
// and through the validator alone.
func BenchmarkValidate(b *testing.B) {
	raw := []byte(`{"type":"object","properties":{"text":{"type":"string","description":"The text to return."}},"required":["text"]}`)
	args := []byte(`{"text":"ping"}`)
	sch, p, err := compileSchema("echo", raw)
	if err != nil {
		b.Fatal(err)
	}
	set := &Set{byName: map[string]*entry{"plain": {schema: sch, plain: p}, "validator": {schema: sch}}}
	for _, name := range []string{"plain", "validator"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := set.Validate(name, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
