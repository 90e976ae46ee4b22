package events_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// protocolDoc is the protocol as the repository documents it.
const protocolDoc = "../docs/protocol.md"

// Table headers of docs/protocol.md that the tests below read.
const (
	eventTableHeader   = "| event | fields | when it comes |"
	commandTableHeader = "| command | fields | answer (`data`) |"
	codeTableHeader    = "| code | meaning |"
)

// reservedMark marks a row of the doc for a name that is not implemented.
const reservedMark = "reserved: not implemented yet"

// envelopeKeys are the keys every event has before its own fields.
var envelopeKeys = []string{"type", "session", "seq", "ts"}

// docRow is one row of a table of the doc: its name (first column), the
// names in its fields column, and whether it is marked reserved.
type docRow struct {
	name     string
	fields   []string
	reserved bool
}

// readDoc returns docs/protocol.md.
func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(protocolDoc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var codeSpan = regexp.MustCompile("^`([a-z_]+)`$")

// table parses the table of doc whose header line is header. The first
// column must be one code span; with fields, the second column is "—" or
// code spans separated by ", ".
func table(t *testing.T, doc, header string, fields bool) []docRow {
	t.Helper()
	_, after, ok := strings.Cut(doc, "\n"+header+"\n")
	if !ok {
		t.Fatalf("%s has no table headed %q", protocolDoc, header)
	}
	var rows []docRow
	for i, line := range strings.Split(after, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if i == 0 { // the |---| line
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		m := codeSpan.FindStringSubmatch(strings.TrimSpace(cells[0]))
		if m == nil {
			t.Fatalf("%s, table %q: first cell of %q is not one `name`", protocolDoc, header, line)
		}
		r := docRow{name: m[1], reserved: strings.Contains(line, reservedMark)}
		if fields {
			r.fields = fieldNames(t, line, strings.TrimSpace(cells[1]))
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: table %q has no rows", protocolDoc, header)
	}
	return rows
}

// fieldNames parses a fields cell: "—" or "`a`, `b`".
func fieldNames(t *testing.T, line, cell string) []string {
	t.Helper()
	if cell == "—" {
		return nil
	}
	var names []string
	for _, part := range strings.Split(cell, ", ") {
		m := codeSpan.FindStringSubmatch(part)
		if m == nil {
			t.Fatalf("%s: the fields cell of %q must be — or `field`, `field`, ...; %q is neither", protocolDoc, line, part)
		}
		names = append(names, m[1])
	}
	return names
}

// byName indexes rows by name, failing on a name listed twice.
func byName(t *testing.T, rows []docRow) map[string]docRow {
	t.Helper()
	m := map[string]docRow{}
	for _, r := range rows {
		if _, dup := m[r.name]; dup {
			t.Errorf("%s lists %q twice", protocolDoc, r.name)
		}
		m[r.name] = r
	}
	return m
}

// jsonKeys returns the top-level keys of a JSON object in document order.
func jsonKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", b)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// eventKeys returns the keys the JSON form of an event of the payload field
// fd carries besides the envelope, in the order they are written.
func eventKeys(t *testing.T, fd protoreflect.FieldDescriptor) []string {
	t.Helper()
	ev := &eventsv1.Event{}
	m := ev.ProtoReflect()
	m.Set(fd, m.NewField(fd))
	keys := jsonKeys(t, eventjson.Append(nil, ev))
	if !slices.Equal(keys[:len(envelopeKeys)], envelopeKeys) {
		t.Fatalf("%s: envelope keys %v, want %v", fd.Name(), keys, envelopeKeys)
	}
	return keys[len(envelopeKeys):]
}

// TestProtocolDocEvents: the event table of docs/protocol.md has one row per
// event type of events/v1, and lists exactly the fields its JSON form
// carries, in the order they are written.
func TestProtocolDocEvents(t *testing.T) {
	rows := byName(t, table(t, readDoc(t), eventTableHeader, true))
	payload := (&eventsv1.Event{}).ProtoReflect().Descriptor().Oneofs().ByName("payload").Fields()
	for i := range payload.Len() {
		fd := payload.Get(i)
		name := string(fd.Name())
		r, ok := rows[name]
		if !ok {
			t.Errorf("event %q of events/v1 is not in the event table of %s", name, protocolDoc)
			continue
		}
		delete(rows, name)
		if want := eventKeys(t, fd); !slices.Equal(r.fields, want) {
			t.Errorf("%s lists the fields of %q as %v; its JSON form has %v", protocolDoc, name, r.fields, want)
		}
	}
	for name := range rows {
		t.Errorf("%s lists event %q, which events/v1 does not have", protocolDoc, name)
	}
}

// commandMessages returns the commands of events/v1 by wire name: the
// messages of commands.proto that no message refers to (the others are
// parts of commands and answers), except Reply, which answers them all.
func commandMessages() map[string]protoreflect.MessageDescriptor {
	file := eventsv1.File_events_v1_commands_proto
	used := map[protoreflect.FullName]bool{}
	for _, f := range []protoreflect.FileDescriptor{file, eventsv1.File_events_v1_events_proto} {
		msgs := f.Messages()
		for i := range msgs.Len() {
			fields := msgs.Get(i).Fields()
			for j := range fields.Len() {
				if md := fields.Get(j).Message(); md != nil {
					used[md.FullName()] = true
				}
			}
		}
	}
	cmds := map[string]protoreflect.MessageDescriptor{}
	msgs := file.Messages()
	for i := range msgs.Len() {
		md := msgs.Get(i)
		if !used[md.FullName()] && md.Name() != "Reply" {
			cmds[snake(string(md.Name()))] = md
		}
	}
	return cmds
}

// snake turns a message name into its wire name: CreateSession → create_session.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestProtocolDocCommands: every command of events/v1 has a row in the
// command table of docs/protocol.md listing exactly its fields (session
// aside: every command line carries it), and a section of its own; a row
// marked reserved names no command of events/v1.
func TestProtocolDocCommands(t *testing.T) {
	doc := readDoc(t)
	rows := byName(t, table(t, doc, commandTableHeader, true))
	cmds := commandMessages()
	if len(cmds) < 13 {
		t.Fatalf("found only %d commands in events/v1: %v", len(cmds), cmds)
	}
	for name, md := range cmds {
		r, ok := rows[name]
		switch {
		case !ok:
			t.Errorf("command %q of events/v1 is not in the command table of %s", name, protocolDoc)
			continue
		case r.reserved:
			t.Errorf("%s marks command %q reserved, but events/v1 has it", protocolDoc, name)
		}
		var want []string
		fields := md.Fields()
		for i := range fields.Len() {
			if f := string(fields.Get(i).Name()); f != "session" {
				want = append(want, f)
			}
		}
		if !slices.Equal(r.fields, want) {
			t.Errorf("%s lists the fields of %q as %v; events/v1 has %v", protocolDoc, name, r.fields, want)
		}
		if !strings.Contains(doc, "\n### `"+name+"`\n") {
			t.Errorf("%s has no section \"### `%s`\"", protocolDoc, name)
		}
	}
	for name, r := range rows {
		if _, ok := cmds[name]; !ok && !r.reserved {
			t.Errorf("%s lists command %q, which events/v1 does not have; mark it %q if it is to come", protocolDoc, name, reservedMark)
		}
	}
}

// TestProtocolDocErrorCodes: every error code of codes.go is in the error
// code table of docs/protocol.md.
func TestProtocolDocErrorCodes(t *testing.T) {
	rows := byName(t, table(t, readDoc(t), codeTableHeader, false))
	f, err := parser.ParseFile(token.NewFileSet(), "codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		lit, ok := node.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		code, err := strconv.Unquote(lit.Value)
		if err != nil {
			t.Fatal(err)
		}
		n++
		if _, ok := rows[code]; !ok {
			t.Errorf("error code %q of codes.go is not in the error code table of %s", code, protocolDoc)
		}
		return true
	})
	if n < 11 {
		t.Fatalf("found only %d codes in codes.go", n)
	}
}

var (
	heading    = regexp.MustCompile("(?m)^#{1,6} (.+)$")
	anchorLink = regexp.MustCompile(`\]\(#([^)]+)\)`)
	notInSlug  = regexp.MustCompile(`[^a-z0-9 _-]`)
)

// TestProtocolDocAnchors: every link within docs/protocol.md leads to one of
// its headings (named as GitHub names them).
func TestProtocolDocAnchors(t *testing.T) {
	doc := readDoc(t)
	slugs := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(doc, -1) {
		slug := notInSlug.ReplaceAllString(strings.ToLower(m[1]), "")
		slugs[strings.ReplaceAll(slug, " ", "-")] = true
	}
	for _, m := range anchorLink.FindAllStringSubmatch(doc, -1) {
		if !slugs[m[1]] {
			t.Errorf("%s links #%s, which is none of its headings", protocolDoc, m[1])
		}
	}
}
