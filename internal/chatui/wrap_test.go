package chatui

import "testing"

func TestLineBuffer(t *testing.T) {
	cases := []struct {
		name   string
		width  int
		chunks []string
		want   []string // what each add returns, then flush
	}{
		{"whole lines only", 0, []string{"Hel", "lo\nwor", "ld"}, []string{"", "Hello\n", "", "world\n"}},
		{"wraps at a space", 10, []string{"one two three four"}, []string{"one two\nthree\n", "four\n"}},
		{"hard break without spaces", 5, []string{"abcdefgh"}, []string{"abcde\n", "fgh\n"}},
		{"colour codes take no room", 6, []string{"\x1b[2mab\x1b[0m cd ef"}, []string{"\x1b[2mab\x1b[0m cd\n", "ef\n"}},
		{"nothing to flush", 0, []string{"a\n"}, []string{"a\n", ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := lineBuffer{width: c.width}
			var got []string
			for _, ch := range c.chunks {
				got = append(got, b.add(ch))
			}
			got = append(got, b.flush())
			if len(got) != len(c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("got %q, want %q", got, c.want)
				}
			}
		})
	}
}
