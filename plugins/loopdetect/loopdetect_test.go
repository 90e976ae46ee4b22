package loopdetect_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/loopdetect"
)

// step is one ended call: "tool args", optionally in another run ("r-2|tool args").
type step string

// event builds the after_tool event of s; runs default to r-1.
func (s step) event() *plugins.Event {
	run, rest, ok := strings.Cut(string(s), "|")
	if !ok {
		run, rest = "r-1", string(s)
	}
	tool, args, _ := strings.Cut(rest, " ")
	return &plugins.Event{Hook: plugins.AfterTool, Session: "s1", RunID: run,
		Call: &eventsv1.ToolCall{Id: "c", Name: tool, Args: &eventsv1.RawJSON{Json: []byte(args)}}}
}

// summary turns actions into "kind tool count action", "" for none.
func summary(t *testing.T, acts []plugins.Action) string {
	t.Helper()
	if len(acts) == 0 {
		return ""
	}
	if len(acts) != 2 || acts[0].Kind != plugins.Emit {
		t.Fatalf("actions = %+v, want an emit and one more", acts)
	}
	ld, ok := acts[0].Event.(*eventsv1.LoopDetected)
	if !ok {
		t.Fatalf("emitted %T, want *LoopDetected", acts[0].Event)
	}
	return fmt.Sprintf("%s %s %d %s", ld.Kind, ld.Tool, ld.Count, acts[1].Kind)
}

func TestHandle(t *testing.T) {
	const (
		a  = step(`read_file {"path":"a","limit":5}`)
		a2 = step(`read_file { "limit": 5, "path": "a" }`) // a, keys reordered
		b  = step(`shell {"command":"ls"}`)
		c  = step(`shell {"command":"pwd"}`)
	)
	tests := []struct {
		name   string
		config string
		steps  []step
		want   []string
	}{
		{name: "repeat up to abort", steps: []step{a, a, a, a, a, a},
			want: []string{"", "", "repeat read_file 3 intervene", "repeat read_file 4 intervene",
				"repeat read_file 5 intervene", "repeat read_file 6 abort"}},
		{name: "key order does not matter", steps: []step{a, a2, a}, want: []string{"", "", "repeat read_file 3 intervene"}},
		{name: "another call breaks a repeat", steps: []step{a, a, b, a, a},
			want: []string{"", "", "", "", ""}},
		{name: "same tool other args", steps: []step{b, c, b, b}, want: []string{"", "", "", ""}},
		{name: "alternation from 4 calls", steps: []step{a, b, a, b, a, b},
			want: []string{"", "", "", "alternation read_file, shell 4 intervene",
				"alternation read_file, shell 5 intervene", "alternation read_file, shell 6 abort"}},
		{name: "alternation of one tool", steps: []step{b, c, b, c},
			want: []string{"", "", "", "alternation shell 4 intervene"}},
		{name: "third call breaks an alternation", steps: []step{a, b, a, c, a, b},
			want: []string{"", "", "", "", "", ""}},
		{name: "a new pair starts its own alternation", steps: []step{a, b, a, c, a, c},
			want: []string{"", "", "", "", "", "alternation read_file, shell 4 intervene"}},
		{name: "repeat ends an alternation", steps: []step{a, b, a, b, b, a},
			want: []string{"", "", "", "alternation read_file, shell 4 intervene", "", ""}},
		{name: "new run starts afresh", steps: []step{a, a, "r-2|" + a, "r-2|" + a, "r-2|" + a},
			want: []string{"", "", "", "", "repeat read_file 3 intervene"}},
		{name: "threshold 2", config: `{"threshold": 2, "abort_at": 3}`, steps: []step{b, b, b},
			want: []string{"", "repeat shell 2 intervene", "repeat shell 3 abort"}},
		{name: "alternation waits for 4 calls", config: `{"threshold": 2}`, steps: []step{a, b, a, b},
			want: []string{"", "", "", "alternation read_file, shell 4 intervene"}},
		{name: "never abort", config: `{"abort_at": 0}`, steps: []step{b, b, b, b, b, b, b},
			want: []string{"", "", "repeat shell 3 intervene", "repeat shell 4 intervene", "repeat shell 5 intervene",
				"repeat shell 6 intervene", "repeat shell 7 intervene"}},
		{name: "no arguments", steps: []step{"echo", "echo {}", "echo  "},
			want: []string{"", "", "repeat echo 3 intervene"}},
		{name: "numbers kept as written", steps: []step{`sleep {"ms":1}`, `sleep {"ms":1.0}`, `sleep {"ms":1}`},
			want: []string{"", "", ""}},
		{name: "not JSON compared as is", steps: []step{"x {", "x {", "x {"},
			want: []string{"", "", "repeat x 3 intervene"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := loopdetect.New(json.RawMessage(tt.config))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			var got []string
			for _, s := range tt.steps {
				got = append(got, summary(t, p.Handle(s.event())))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("answers =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestTexts(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
		want  []plugins.Action
	}{
		{name: "repeat", steps: []step{`shell {"command":"ls"}`, `shell {"command":"ls"}`, `shell {"command":"ls"}`},
			want: []plugins.Action{
				{Kind: plugins.Emit, Event: &eventsv1.LoopDetected{Kind: "repeat", Tool: "shell", Count: 3}},
				{Kind: plugins.Intervene, Text: "You have called shell with the same arguments 3 times in a row; the result will not change. Try something different or answer."},
			}},
		{name: "repeat abort", steps: []step{"echo", "echo", "echo", "echo", "echo", "echo"},
			want: []plugins.Action{
				{Kind: plugins.Emit, Event: &eventsv1.LoopDetected{Kind: "repeat", Tool: "echo", Count: 6}},
				{Kind: plugins.Abort, Reason: "loop_detected", Text: "loop detected: the model called echo with the same arguments 6 times in a row"},
			}},
		{name: "alternation", steps: []step{"a", "b", "a", "b"},
			want: []plugins.Action{
				{Kind: plugins.Emit, Event: &eventsv1.LoopDetected{Kind: "alternation", Tool: "a, b", Count: 4}},
				{Kind: plugins.Intervene, Text: "You have alternated between the same two calls (a, b) for 4 calls in a row; the result will not change. Try something different or answer."},
			}},
		{name: "alternation abort", steps: []step{"a", "b", "a", "b", "a", "b"},
			want: []plugins.Action{
				{Kind: plugins.Emit, Event: &eventsv1.LoopDetected{Kind: "alternation", Tool: "a, b", Count: 6}},
				{Kind: plugins.Abort, Reason: "loop_detected", Text: "loop detected: the model alternated between the same two calls (a, b) for 6 calls in a row"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := loopdetect.New(nil)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			var got []plugins.Action
			for _, s := range tt.steps {
				got = p.Handle(s.event())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("last answer = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if !proto.Equal(g.Event, w.Event) {
					t.Errorf("action %d event = %v, want %v", i, g.Event, w.Event)
				}
				g.Event, w.Event = nil, nil
				if !reflect.DeepEqual(g, w) {
					t.Errorf("action %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestIgnores(t *testing.T) {
	p, err := loopdetect.New(nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, ev := range []*plugins.Event{{Hook: plugins.AfterTool}, {Hook: plugins.BeforeTool, Call: step("echo").event().Call}} {
		for range 10 {
			if got := p.Handle(ev); got != nil {
				t.Fatalf("Handle(%+v) = %+v, want nil", ev, got)
			}
		}
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		config  string
		wantErr string
	}{
		{name: "absent"},
		{name: "all fields", config: `{"threshold": 2, "abort_at": 2, "priority": 1}`},
		{name: "never abort", config: `{"abort_at": 0}`},
		{name: "unknown field", config: `{"thresold": 3}`, wantErr: `unknown field "thresold"`},
		{name: "threshold too low", config: `{"threshold": 1}`, wantErr: "threshold is 1"},
		{name: "abort below threshold", config: `{"threshold": 4, "abort_at": 3}`, wantErr: "abort_at is 3"},
		{name: "bad priority", config: `{"priority": -1}`, wantErr: "priority -1 is outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := loopdetect.New(json.RawMessage(tt.config))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if p.Name() != "loop_detection" || !reflect.DeepEqual(p.Hooks(), []plugins.Hook{plugins.AfterTool}) {
					t.Errorf("Name, Hooks = %q, %v", p.Name(), p.Hooks())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New = %v; want an error containing %q", err, tt.wantErr)
			}
		})
	}
	if d := loopdetect.DefaultConfig(); d != (loopdetect.Config{Threshold: 3, AbortAt: 6, Priority: 200}) {
		t.Errorf("DefaultConfig = %+v", d)
	}
}
