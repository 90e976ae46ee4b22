// Command tack runs Tack agent sessions: `tack demo` plays a scripted
// session as a timeline; `tack chat` is a terminal conversation; `tack rpc` speaks
// JSON lines on stdin/stdout; `tack serve` serves sessions over HTTP;
// `tack node` serves them to other actor systems over protoactor remote;
// `tack mcp` offers the configured agents as MCP tools on stdio;
// `tack export` and `tack import` move a stored session as one document.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/tack-run/tack/tools/sandbox"
)

const usage = `usage: tack <command> [flags]

commands:
  demo   play a built-in scripted session as a coloured timeline
  chat   talk to a session in the terminal (Enter while busy steers, Ctrl-C aborts)
  rpc    serve the JSON-lines protocol on stdin/stdout
  serve  the browser UI at http://127.0.0.1:7700, and sessions over HTTP: REST, Server-Sent Events, AG-UI
  node   sessions for other actor systems over protoactor remote (tack node --listen 127.0.0.1:8090)
  export write a stored session as one JSON document (tack export SESSION > s.json)
  import make a session from such a document (tack import s.json)
  mcp    the configured agents as MCP tools on stdin/stdout (tack mcp --agent demo)

protocol: docs/protocol.md in the repository (commands, events, scripts, config)
http:     docs/http.md (routes, streams, auth); browser UI: docs/web.md
remote:   docs/remote.md (tack node: the gateway, session PIDs, subscriptions)
sessions: docs/sessions.md (images, export and import, deletion and retention)
agents:   docs/mcp.md (tack mcp, /mcp), docs/a2a.md (/a2a/{agent} of tack serve)
`

func main() {
	sandbox.Main() // a sandboxed command's helper never returns from it
	closeOnExec()
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "demo":
		err = demo(args)
	case "chat":
		err = chat(args)
	case "rpc":
		err = rpcCmd(args)
	case "serve":
		err = serve(args)
	case "node":
		err = node(args)
	case "export":
		err = exportCmd(args)
	case "import":
		err = importCmd(args)
	case "mcp":
		err = mcpCmd(args)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "tack: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if errors.Is(err, flag.ErrHelp) {
		return // the subcommand printed its flags
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tack:", err)
		os.Exit(1)
	}
}
