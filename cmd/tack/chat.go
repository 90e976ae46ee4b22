package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"golang.org/x/term"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/internal/chatui"
)

// chat is a terminal conversation with one session: streamed text, a live
// status line, Enter while busy steers, Ctrl-C aborts (twice quits).
func chat(args []string) error {
	var c common
	var model, system, tools, id string
	fs := flag.NewFlagSet("tack chat", flag.ContinueOnError)
	c.register(fs, "sqlite:", false)
	fs.StringVar(&model, "model", "", "the model: script:<path> or a configured model name (default: the configuration's default_model, else script:demo)")
	fs.StringVar(&system, "system", "You are a helpful assistant.", "the system prompt")
	fs.StringVar(&tools, "tools", "", "comma-separated tools the model may call (scripted models bring the demo tools)")
	fs.StringVar(&id, "session", "", "session to continue, or to create with this id (default: a new one)")
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintln(out, "usage: tack chat [flags]")
		fs.PrintDefaults()
		fmt.Fprint(out, "\nin the chat, "+chatui.Help)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	rt, closeRuntime, err := c.runtime()
	if err != nil {
		return err
	}
	defer closeRuntime()
	if model == "" && (c.models == nil || c.models.DefaultModel == "") {
		model = "script:demo"
	}
	var toolNames []string
	if tools != "" {
		toolNames = strings.Split(tools, ",")
	}
	s, err := chatSession(rt, tack.SessionConfig{ID: id, Model: model, System: system, Tools: toolNames})
	if err != nil {
		return err
	}
	ctx := context.Background()
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Buffer: 8192})
	if err != nil {
		return err
	}
	ui := &chatui.Chat{Session: s}
	if term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stdout.Fd())) {
		restore, err := rawTerminal(ui)
		if err != nil {
			return err
		}
		defer restore()
	} else {
		ui.Term = plainTerminal{in: bufio.NewScanner(os.Stdin), out: os.Stdout}
		ui.Interrupts = sigints()
	}
	return ui.Run(ctx, sub.C)
}

// rawTerminal puts the terminal in raw mode under x/term's line editor,
// with Ctrl-C taken out of the input and delivered as an interrupt.
func rawTerminal(ui *chatui.Chat) (restore func(), err error) {
	fd := int(os.Stdin.Fd())
	old, err := term.MakeRaw(fd)
	if err != nil {
		return nil, err
	}
	interrupts := make(chan struct{}, 4)
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{ctrlC{r: os.Stdin, c: interrupts}, os.Stdout}, "")
	if w, h, err := term.GetSize(fd); err == nil {
		_ = t.SetSize(w, h)
		ui.Width = w
	}
	ui.Term, ui.Interrupts, ui.Color, ui.LivePrompt = t, interrupts, os.Getenv("NO_COLOR") == "", true
	return func() { _ = term.Restore(fd, old) }, nil
}

// ctrlC removes Ctrl-C bytes from the input and reports each one.
type ctrlC struct {
	r io.Reader
	c chan<- struct{}
}

func (x ctrlC) Read(p []byte) (int, error) {
	for {
		n, err := x.r.Read(p)
		kept := p[:0]
		for _, b := range p[:n] {
			if b == 3 {
				select {
				case x.c <- struct{}{}:
				default:
				}
				continue
			}
			kept = append(kept, b)
		}
		if len(kept) > 0 || err != nil {
			return len(kept), err
		}
	}
}

// plainTerminal serves pipes: lines in, text out, no prompt.
type plainTerminal struct {
	in  *bufio.Scanner
	out io.Writer
}

func (p plainTerminal) ReadLine() (string, error) {
	if p.in.Scan() {
		return p.in.Text(), nil
	}
	if err := p.in.Err(); err != nil {
		return "", err
	}
	return "", io.EOF
}

func (p plainTerminal) Write(b []byte) (int, error) { return p.out.Write(b) }
func (p plainTerminal) SetPrompt(string)            {}

// sigints delivers SIGINT as interrupts.
func sigints() <-chan struct{} {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, os.Interrupt)
	out := make(chan struct{}, 4)
	go func() {
		for range sig {
			out <- struct{}{}
		}
	}()
	return out
}

// chatSession continues the stored session cfg.ID names, or starts one.
func chatSession(rt *tack.Runtime, cfg tack.SessionConfig) (*tack.Session, error) {
	if cfg.ID != "" {
		if s, err := rt.Session(cfg.ID); err == nil {
			return s, nil
		} else if tack.Code(err) != "invalid_session" {
			return nil, err
		}
	}
	return rt.Spawn(cfg)
}
