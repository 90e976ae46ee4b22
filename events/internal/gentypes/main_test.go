package main

import (
	"bytes"
	"os"
	"testing"
)

// TestGeneratedFileIsCurrent fails when events/types_gen.go differs from
// what the generator writes for the current proto: run go generate in
// events/.
func TestGeneratedFileIsCurrent(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../types_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("events/types_gen.go is stale: run `go generate` in events/")
	}
}
