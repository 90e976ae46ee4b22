package output

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCapped(t *testing.T) {
	tests := []struct {
		name   string
		limit  int
		writes []string
		want   string
	}{
		{name: "fits", limit: 10, writes: []string{"abc", "def"}, want: "abcdef"},
		{name: "exactly the limit", limit: 6, writes: []string{"abc", "def"}, want: "abcdef"},
		{name: "head and tail kept", limit: 6, writes: []string{"abcd", "efgh", "ijkl"},
			want: "abc\n[output truncated: 6 bytes]\njkl"},
		{name: "many small writes", limit: 4, writes: slices.Repeat([]string{"x"}, 100),
			want: "xx\n[output truncated: 96 bytes]\nxx"},
		{name: "cut at rune boundaries", limit: 6, writes: []string{"aaé", "zzzz", "éxb"},
			want: "aa\n[output truncated: 8 bytes]\nxb"},
		{name: "whole runes kept", limit: 6, writes: []string{"aéé", "zzzz", "ééb"},
			want: "aé\n[output truncated: 8 bytes]\néb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewCapped(tt.limit)
			for _, w := range tt.writes {
				b.Write([]byte(w))
			}
			if got := b.String(); got != tt.want {
				t.Errorf("String = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLineStreamer(t *testing.T) {
	long := strings.Repeat("y", maxUpdate+10)
	tests := []struct {
		name   string
		budget int
		writes []string
		want   []string
	}{
		{name: "lines split across writes", budget: 1000, writes: []string{"on", "e\ntw", "o\nthree"},
			want: []string{"one\n", "two\n", "three"}},
		{name: "several lines in one write", budget: 1000, writes: []string{"a\nb\nc\n"},
			want: []string{"a\n", "b\n", "c\n"}},
		{name: "long line in pieces", budget: 1 << 20, writes: []string{long + "\n"},
			want: []string{long[:maxUpdate], long[maxUpdate:] + "\n"}},
		{name: "budget stops streaming", budget: 4, writes: []string{"a\nb\nc\nd\n"},
			want: []string{"a\n", "b\n", "[further output is not streamed; it is in the result]\n"}},
		{name: "budget ends inside a long line", budget: 10, writes: []string{long, long + "\n"},
			want: []string{long[:maxUpdate], "[further output is not streamed; it is in the result]\n"}},
		{name: "unterminated last line flushed", budget: 1000, writes: []string{"a\nb"},
			want: []string{"a\n", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			s := &lineStreamer{update: func(p string) { got = append(got, p) }, budget: tt.budget}
			for _, w := range tt.writes {
				s.Write([]byte(w))
			}
			s.flush()
			if !slices.Equal(got, tt.want) {
				t.Errorf("partials = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestUpdates(t *testing.T) {
	var got []string
	send := Updates(10, func(p string) { got = append(got, p) })
	send("abc")
	send("")
	send(strings.Repeat("é", 4)) // 8 bytes: the budget passes within it
	send("never")
	want := []string{"abc", "éééé", "[further output is not streamed; it is in the result]\n"}
	if !slices.Equal(got, want) {
		t.Errorf("updates %q, want %q", got, want)
	}
	got = nil
	Updates(1<<20, func(p string) { got = append(got, p) })(strings.Repeat("é", maxUpdate)) // 8 KiB
	if len(got) != 2 || len(got[0]) > maxUpdate || !utf8.ValidString(got[0]) || got[0]+got[1] != strings.Repeat("é", maxUpdate) {
		t.Errorf("one long piece: %d updates of %v bytes", len(got), lens(got))
	}
}

func TestCap(t *testing.T) {
	if got := Cap("short", 10); got != "short" {
		t.Errorf("Cap of what fits: %q", got)
	}
	if got := Cap("abcdefghijkl", 6); got != "abc\n[output truncated: 6 bytes]\njkl" {
		t.Errorf("Cap: %q", got)
	}
	if err := CapError(nil, 4); err != nil {
		t.Errorf("CapError(nil) = %v", err)
	}
	short := errors.New("fine")
	if err := CapError(short, 4); err != short {
		t.Errorf("CapError of what fits: %v", err)
	}
	if err := CapError(errors.New("abcdefghijkl"), 6); err.Error() != "abc\n[output truncated: 6 bytes]\njkl" {
		t.Errorf("CapError: %v", err)
	}
}

func lens(s []string) []int {
	var n []int
	for _, x := range s {
		n = append(n, len(x))
	}
	return n
}
