// Command remote is a program with an actor system of its own that drives
// a session on a running `tack node` over protoactor remote: it creates a
// session, subscribes to its events, prompts, approves the tool call the
// approval plugin holds, steers while a tool runs, aborts the run, and
// prints the events as they come.
//
//	go run ./cmd/tack node --listen 127.0.0.1:8090
//	go run ./examples/remote -node 127.0.0.1:8090
//
// With -follow it only subscribes to -session and prints its events until
// it is stopped. Against a node that speaks TLS, -tls-cert and -tls-key
// give this program's certificate (the node dials this program's own
// endpoint to answer, so it serves TLS too) and -tls-ca the CA that
// signed the node's, which the node's certificate must be signed by
// and which is also required of the node when it dials in:
//
//	go run ./examples/remote -node 10.0.0.5:8090 -listen 10.0.0.7:0 \
//	    -tls-ca ca.pem -tls-cert me.pem -tls-key me-key.pem
//
// (-listen is where this program's endpoint listens, an address the node
// can reach.)
//
// docs/remote.md explains the messages.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/server/remote/remotetls"
	"github.com/tack-run/tack/server/remote/remotev1"
)

// script is the session's scripted model: a shell call the approval
// plugin holds, then a sleep that a steering message cuts short, then a
// sleep that the abort stops.
const script = `{"turns":[
 {"text":"Let me look.","tool_calls":[{"name":"shell","args":{"command":"echo hello from the node"}}]},
 {"text":"Now a long wait.","tool_calls":[{"name":"sleep","args":{"ms":30000}}]},
 {"text":"Understood, waiting again.","tool_calls":[{"name":"sleep","args":{"ms":30000}}]},
 {"text":"Done."}]}`

// timeout bounds every request to the node, and the wait for each event
// (-timeout).
var timeout = 10 * time.Second

func main() {
	nodeAddr := flag.String("node", "127.0.0.1:8090", "the tack node's HOST:PORT")
	session := flag.String("session", "", "session id (default: a new one, remote-<time>)")
	follow := flag.Bool("follow", false, "only subscribe to -session and print its events until stopped")
	flag.DurationVar(&timeout, "timeout", timeout, "how long to wait for each answer and each event")
	listen := flag.String("listen", "127.0.0.1:0", "HOST:PORT of this program's own endpoint, which the node dials to answer (port 0: a free one)")
	tlsCA := flag.String("tls-ca", "", "PEM `FILE` of the CA that signed the node's certificate: trust only it (mutual TLS)")
	tlsCert := flag.String("tls-cert", "", "PEM `FILE` of this program's certificate, for a node that speaks TLS (with -tls-key)")
	tlsKey := flag.String("tls-key", "", "PEM `FILE` of the -tls-cert certificate's private key")
	flag.Parse()
	config, err := remoteConfig(*listen, *tlsCert, *tlsKey, *tlsCA)
	if err == nil {
		err = run(config, *nodeAddr, *session, *follow)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "remote:", err)
		os.Exit(1)
	}
}

// remoteConfig is our endpoint's configuration: where it listens, and
// TLS when a certificate is given.
func remoteConfig(listen, cert, key, ca string) (*remote.Config, error) {
	host, portText, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("-listen %s: %w", listen, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("-listen %s: the port is not a number", listen)
	}
	var opts []remote.ConfigOption
	switch {
	case cert == "" && key == "" && ca == "":
	case cert == "" || key == "":
		return nil, errors.New("-tls-cert and -tls-key go together, and -tls-ca needs them: the node dials this program's endpoint to answer, and that endpoint serves TLS too")
	default:
		if opts, err = remotetls.Options(cert, key, ca); err != nil {
			return nil, err
		}
	}
	return remote.Configure(host, port, opts...), nil
}

func run(config *remote.Config, nodeAddr, session string, follow bool) (err error) {
	// An actor system of our own, reachable from the node: it sends our
	// subscriber the events and our futures the replies.
	system := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
	r := remote.NewRemote(system, config)
	r.Start()
	// After a failure, stop at once: a graceful stop waits for an endpoint
	// that could not connect to give up (about 10 s).
	defer func() { r.Shutdown(err == nil); system.Shutdown() }()

	// The subscriber: an actor that passes the events it gets on.
	evs := make(chan *eventsv1.Event, 1024)
	me := system.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		if ev, ok := ctx.Message().(*eventsv1.Event); ok {
			evs <- ev
		}
	}))

	if follow {
		if err := subscribe(system, remotev1.SessionPID(nodeAddr, session), me, nil); err != nil {
			return err
		}
		fmt.Println("subscribed to", session)
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, os.Interrupt)
		for {
			select {
			case ev := <-evs:
				print(ev)
			case <-stop:
				return nil
			}
		}
	}

	if session == "" {
		session = "remote-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	// The gateway makes the session; its PID takes the commands.
	if _, err := request(system, remotev1.GatewayPID(nodeAddr), &eventsv1.CreateSession{
		Session: session,
		Script:  &eventsv1.RawJSON{Json: []byte(script)},
		Plugins: []*eventsv1.PluginConfig{{Name: "approval", Config: &eventsv1.RawJSON{Json: []byte(`{"tools":["shell"]}`)}}},
	}); err != nil {
		return err
	}
	s := remotev1.SessionPID(nodeAddr, session)
	fmt.Println("created", session, "at", s.Address, s.Id)
	types := []string{"prompt_received", "agent_start", "agent_abort", "agent_end", "approval_*", "tool_execution_start",
		"tool_execution_end", "tool_skipped_for_steering", "steering_*"}
	if err := subscribe(system, s, me, types); err != nil {
		return err
	}
	if _, err := request(system, s, &eventsv1.Prompt{Text: "check the node, then wait"}); err != nil {
		return err
	}
	sleeps := 0
	for {
		var ev *eventsv1.Event
		select {
		case ev = <-evs:
		case <-time.After(timeout):
			return fmt.Errorf("no event for %v", timeout)
		}
		print(ev)
		var err error
		switch {
		case ev.GetApprovalRequired() != nil:
			_, err = request(system, s, &eventsv1.Approve{ApprovalId: ev.GetApprovalRequired().ApprovalId})
		case ev.GetToolExecutionStart().GetName() == "sleep" && sleeps == 0:
			sleeps++
			_, err = request(system, s, &eventsv1.Steer{Text: "do not wait that long"})
		case ev.GetToolExecutionStart().GetName() == "sleep":
			_, err = request(system, s, &eventsv1.Abort{})
		case ev.GetAgentEnd() != nil:
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// subscribe makes me a subscriber of the session at s, from its first
// event.
func subscribe(system *actor.ActorSystem, s, me *actor.PID, types []string) error {
	_, err := request(system, s, &remotev1.Subscribe{Subscriber: me, Types: types})
	return err
}

// request sends a command and waits for its Reply; an error reply is an
// error.
func request(system *actor.ActorSystem, to *actor.PID, msg any) (*eventsv1.Reply, error) {
	res, err := system.Root.RequestFuture(to, msg, timeout).Result()
	if err != nil {
		return nil, fmt.Errorf("%T: %w", msg, err)
	}
	r, ok := res.(*eventsv1.Reply)
	if !ok {
		return nil, fmt.Errorf("%T: unexpected answer %T", msg, res)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("%T: %s: %s", msg, r.Error.Code, r.Error.Message)
	}
	return r, nil
}

// print writes one event: its seq, its type and a detail worth seeing.
func print(ev *eventsv1.Event) {
	detail := ""
	switch {
	case ev.GetToolExecutionStart() != nil:
		detail = ev.GetToolExecutionStart().Name
	case ev.GetToolExecutionEnd() != nil:
		detail = ev.GetToolExecutionEnd().Name
	case ev.GetApprovalRequired() != nil:
		detail = ev.GetApprovalRequired().Tool
	case ev.GetApprovalResolved() != nil:
		detail = ev.GetApprovalResolved().Status
	case ev.GetAgentEnd() != nil:
		detail = ev.GetAgentEnd().Reason
	case ev.GetPromptReceived() != nil:
		detail = ev.GetPromptReceived().Text
	}
	fmt.Printf("%d %s %s\n", ev.Seq, events.Type(ev), detail)
}
