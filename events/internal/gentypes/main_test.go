package main

import (
	"bytes"
	"os"
	"testing"
)

// TestGeneratedFilesAreCurrent fails when events/types_gen.go or
// events/eventjson/payload_gen.go differs from what the generator writes
// for the current proto: run go generate ./events/...
func TestGeneratedFilesAreCurrent(t *testing.T) {
	for _, c := range []struct {
		path string
		gen  func() ([]byte, error)
	}{
		{"../../types_gen.go", generate},
		{"../../eventjson/payload_gen.go", generateCodec},
	} {
		want, err := c.gen()
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run `go generate ./events/...`", c.path)
		}
	}
}
