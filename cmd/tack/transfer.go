package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/tack-run/tack/events/eventjson"
	"github.com/tack-run/tack/server/command"
)

// exportCmd writes a stored session as one JSON document (export_session)
// to stdout or -o FILE.
func exportCmd(args []string) error {
	var c common
	var out string
	fs := flag.NewFlagSet("tack export", flag.ContinueOnError)
	c.register(fs, "sqlite:", false)
	fs.StringVar(&out, "o", "-", "`FILE` to write the document to (- for stdout)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: tack export [flags] SESSION\n\n"+
			"Writes the session — configuration, whole history, todos, title, usage — as one JSON document of\n"+
			"format tack.session/v1 (docs/sessions.md), for tack import or POST /v1/sessions/import.\n"+
			"The store is opened by this process: stop a tack serve on the same SQLite file first, or use\n"+
			"GET /v1/sessions/SESSION/export on it.\n\n")
		fs.PrintDefaults()
	}
	id, err := oneArg(fs, args, "SESSION")
	if err != nil {
		return err
	}
	rt, closeRuntime, err := c.runtime()
	if err != nil {
		return err
	}
	defer closeRuntime()
	data, err := command.Run(context.Background(), command.Env{Runtime: rt}, "export_session", id, nil)
	if err != nil {
		return err
	}
	doc, err := eventjson.AppendMessage(nil, data)
	if err != nil {
		return err
	}
	doc = append(doc, '\n')
	if out == "-" {
		_, err = os.Stdout.Write(doc)
		return err
	}
	return os.WriteFile(out, doc, 0o600)
}

// importCmd makes a session from a document tack export wrote, and
// prints its id.
func importCmd(args []string) error {
	var c common
	var id, user string
	fs := flag.NewFlagSet("tack import", flag.ContinueOnError)
	c.register(fs, "sqlite:", false)
	fs.StringVar(&id, "session", "", "id of the new session (default: a new one; the document's own id is not reused)")
	fs.StringVar(&user, "user", "", "user the session belongs to: local for tack serve without --auth, a token's user with it\n(default: none, as tack chat's sessions)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: tack import [flags] FILE\n\n"+
			"Makes an idle session from a document tack export wrote (FILE - reads stdin) and prints its id.\n"+
			"Its configuration is checked as create_session checks it (the models must be configured here).\n\n")
		fs.PrintDefaults()
	}
	file, err := oneArg(fs, args, "FILE")
	if err != nil {
		return err
	}
	var doc []byte
	if file == "-" {
		doc, err = io.ReadAll(os.Stdin)
	} else {
		doc, err = os.ReadFile(file)
	}
	if err != nil {
		return err
	}
	if !json.Valid(doc) {
		return fmt.Errorf("%s is not a JSON document: give what tack export wrote", file)
	}
	rt, closeRuntime, err := c.runtime()
	if err != nil {
		return err
	}
	defer closeRuntime()
	body, err := json.Marshal(map[string]any{"session": id, "document": json.RawMessage(doc)})
	if err != nil {
		return err
	}
	data, err := command.Run(context.Background(), command.Env{Runtime: rt, User: user}, "import_session", "", body)
	if err != nil {
		return err
	}
	b, err := eventjson.AppendMessage(nil, data)
	if err != nil {
		return err
	}
	var created struct{ Session string }
	_ = json.Unmarshal(b, &created)
	fmt.Println(created.Session)
	return nil
}

// oneArg parses fs from args and returns its one positional argument,
// named what in the error when there is not exactly one.
func oneArg(fs *flag.FlagSet, args []string, what string) (string, error) {
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if fs.NArg() != 1 {
		return "", fmt.Errorf("%s takes one %s (flags come before it), got %q", fs.Name(), what, fs.Args())
	}
	return fs.Arg(0), nil
}
