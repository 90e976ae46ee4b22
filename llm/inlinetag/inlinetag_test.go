package inlinetag

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// run feeds chunks to an Extractor and returns every piece, Flush's
// included, with adjacent plain text merged: the output whatever the
// chunking.
func run(chunks ...string) []Piece {
	var e Extractor
	var out []Piece
	add := func(ps []Piece) {
		for _, p := range ps {
			if n := len(out); p.Tag == "" && n > 0 && out[n-1].Tag == "" {
				out[n-1].Text += p.Text
				continue
			}
			out = append(out, p)
		}
	}
	for _, c := range chunks {
		add(e.Write(c))
	}
	add(e.Flush())
	return out
}

func text(s string) Piece   { return Piece{Text: s} }
func title(s string) Piece  { return Piece{Tag: Title, Text: s} }
func status(s string) Piece { return Piece{Tag: Status, Text: s} }

func TestPieces(t *testing.T) {
	long := strings.Repeat("x", MaxContent)
	cases := []struct {
		name string
		in   string
		want []Piece
	}{
		{"plain", "Hello there.", []Piece{text("Hello there.")}},
		{"empty", "", nil},
		{"title first", "<title>Fix the build</title>\nLooking now.", []Piece{title("Fix the build"), text("Looking now.")}},
		{"status inside text", "One.<status>Reading files</status> Two.", []Piece{text("One."), status("Reading files"), text(" Two.")}},
		{"both, one line break each", "<title>T</title>\n<status>S</status>\n\nBody", []Piece{title("T"), status("S"), text("\nBody")}},
		{"content trimmed", "<title>  Spaced out \n</title>", []Piece{title("Spaced out")}},
		{"empty content stripped", "a<status> </status>b", []Piece{text("ab")}},
		{"only a tag", "<status>busy</status>", []Piece{status("busy")}},
		{"unterminated at end is text", "Hi <title>never closed", []Piece{text("Hi <title>never closed")}},
		{"unterminated, a tag after it", "<title>a <status>b</status> c", []Piece{text("<title>a "), status("b"), text(" c")}},
		{"prefix at end is text", "Hi <tit", []Piece{text("Hi <tit")}},
		{"other tags are text", "<b>bold</b> <Title>x</Title> <title >y</title >", []Piece{text("<b>bold</b> <Title>x</Title> <title >y</title >")}},
		{"first closing tag ends it", "<title>a</title>b</title>", []Piece{title("a"), text("b</title>")}},
		{"other tag's closing does not", "<title>a</status>b</title>", []Piece{title("a</status>b")}},
		{"longest content", "<title>" + long + "</title>z", []Piece{title(long), text("z")}},
		{"content too long is text", "<title>" + long + "y</title>z", []Piece{text("<title>" + long + "y</title>z")}},
		{"less-than signs", "a < b << c <", []Piece{text("a < b << c <")}},
		{"crlf keeps the cr", "<title>T</title>\r\nx", []Piece{title("T"), text("\r\nx")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := run(c.in); !slices.Equal(got, c.want) {
				t.Fatalf("run(%q) = %q, want %q", c.in, got, c.want)
			}
			if got := run(strings.Split(c.in, "")...); !slices.Equal(got, c.want) {
				t.Fatalf("byte by byte: %q, want %q", got, c.want)
			}
			var plain strings.Builder
			for _, p := range c.want {
				if p.Tag == "" {
					plain.WriteString(p.Text)
				}
			}
			if got := Strip(c.in); got != plain.String() {
				t.Fatalf("Strip(%q) = %q, want %q", c.in, got, plain.String())
			}
		})
	}
}

// TestHoldsOnlyATagPrefix: a Write returns all its text but what may
// still begin a tag.
func TestHoldsOnlyATagPrefix(t *testing.T) {
	cases := []struct {
		chunk, out string
		holding    bool
	}{
		{"Hello <", "Hello ", true},
		{"Hello <ti", "Hello ", true},
		{"Hello <tx", "Hello <tx", false},
		{"Hello <st", "Hello ", true},
		{"a <b> c", "a <b> c", false},
		{"a <title>partial", "a ", true},
		{"a <title>done</title>", "a ", false},
		{"a <title>" + strings.Repeat("y", MaxContent+len("</title>")), "a <title>" + strings.Repeat("y", MaxContent+len("</title>")), false},
	}
	for _, c := range cases {
		var e Extractor
		var got strings.Builder
		for _, p := range e.Write(c.chunk) {
			if p.Tag == "" {
				got.WriteString(p.Text)
			}
		}
		if got.String() != c.out || e.Holding() != c.holding {
			t.Errorf("Write(%q): text %q, holding %v; want %q, %v", c.chunk, got.String(), e.Holding(), c.out, c.holding)
		}
	}
}

// TestLineBreakAcrossChunks: the line break after a tag is stripped when
// it comes in the next chunk, and only one.
func TestLineBreakAcrossChunks(t *testing.T) {
	want := []Piece{status("s"), text("\nx")}
	if got := run("<status>s</status>", "\n", "\nx"); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// FuzzChunking: cutting a text into chunks at any one or two points gives
// the pieces of the whole text.
func FuzzChunking(f *testing.F) {
	for _, s := range []string{
		"<title>Fix the build</title>\nLooking now.",
		"a<status>b</status>\nc<title>d</title>e",
		"<title>a <status>b</status> c",
		"<<title>x</title><",
		"x</title><title></title>\n\n<status>\n</status>",
		"héllo <status>wörk</status>",
	} {
		f.Add(s, uint(3), uint(9))
	}
	f.Fuzz(func(t *testing.T, s string, i, j uint) {
		want := run(s)
		a, b := int(i%uint(len(s)+1)), int(j%uint(len(s)+1))
		a, b = min(a, b), max(a, b)
		if got := run(s[:a], s[a:]); !slices.Equal(got, want) {
			t.Fatalf("split at %d: %q, want %q", a, got, want)
		}
		if got := run(s[:a], s[a:b], s[b:]); !slices.Equal(got, want) {
			t.Fatalf("split at %d, %d: %q, want %q", a, b, got, want)
		}
		for _, p := range want {
			if p.Tag != "" && (p.Text == "" || strings.TrimSpace(p.Text) != p.Text) {
				t.Fatalf("tag piece %q is empty or untrimmed", p)
			}
		}
	})
}

// TestInstructionDocumented: docs/context.md gives the line exactly.
func TestInstructionDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/context.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "\n"+Instruction+"\n") {
		t.Fatal("docs/context.md does not give inlinetag.Instruction on a line of its own")
	}
}
