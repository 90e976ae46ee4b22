package limits_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/limits"
)

// request returns the before_request event of run r-3 in session s1.
func request(u plugins.Usage) *plugins.Event {
	return &plugins.Event{Hook: plugins.BeforeRequest, Session: "s1", RunID: "r-3", Usage: u}
}

func TestHandle(t *testing.T) {
	const all = `{"max_turns": 5, "max_run_tokens": 1000, "max_run_cost_usd": 0.5, "max_session_tokens": 5000, "max_session_cost_usd": 2}`
	tests := []struct {
		name   string
		config string
		usage  plugins.Usage
		want   string // the abort's Text, "" for none
	}{
		{name: "first request", usage: plugins.Usage{}},
		{name: "before the last turn", usage: plugins.Usage{RunTurns: 99}},
		{name: "after the last turn", usage: plugins.Usage{RunTurns: 100}, want: "max_turns of 100 reached in run r-3"},
		{name: "past the last turn", usage: plugins.Usage{RunTurns: 150}, want: "max_turns of 100 reached in run r-3"},
		{name: "one turn allowed, first request", config: `{"max_turns": 1}`, usage: plugins.Usage{RunTurns: 0}},
		{name: "one turn allowed, second request", config: `{"max_turns": 1}`, usage: plugins.Usage{RunTurns: 1},
			want: "max_turns of 1 reached in run r-3"},
		{name: "no turn limit", config: `{"max_turns": 0}`, usage: plugins.Usage{RunTurns: 1 << 30}},
		{name: "no other limits by default", usage: plugins.Usage{RunTokens: 1 << 40, RunCostUSD: 1e6, SessionTokens: 1 << 40, SessionCostUSD: 1e6}},
		{name: "all under", config: all, usage: plugins.Usage{RunTurns: 4, RunTokens: 999, RunCostUSD: 0.4999, SessionTokens: 4999, SessionCostUSD: 1.99}},
		{name: "run tokens", config: all, usage: plugins.Usage{RunTokens: 1000},
			want: "max_run_tokens of 1000 reached in run r-3 (1000 tokens used)"},
		{name: "run cost", config: all, usage: plugins.Usage{RunCostUSD: 0.51234},
			want: "max_run_cost_usd of 0.5 reached in run r-3 ($0.5123 spent)"},
		{name: "session tokens", config: all, usage: plugins.Usage{SessionTokens: 6000},
			want: "max_session_tokens of 5000 reached in session s1 (6000 tokens used)"},
		{name: "session cost", config: all, usage: plugins.Usage{SessionCostUSD: 2},
			want: "max_session_cost_usd of 2 reached in session s1 ($2.0000 spent)"},
		{name: "turns named first", config: all, usage: plugins.Usage{RunTurns: 5, RunTokens: 1000, SessionCostUSD: 3},
			want: "max_turns of 5 reached in run r-3"},
		{name: "run before session", config: all, usage: plugins.Usage{RunCostUSD: 1, SessionTokens: 9000},
			want: "max_run_cost_usd of 0.5 reached in run r-3 ($1.0000 spent)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := limits.New(json.RawMessage(tt.config))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			var want []plugins.Action
			if tt.want != "" {
				want = []plugins.Action{{Kind: plugins.Abort, Reason: "limit_reached", Text: tt.want}}
			}
			if got := p.Handle(request(tt.usage)); !reflect.DeepEqual(got, want) {
				t.Errorf("Handle = %+v, want %+v", got, want)
			}
		})
	}
}

func TestOtherHooks(t *testing.T) {
	p, err := limits.New(nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ev := request(plugins.Usage{RunTurns: 1000})
	ev.Hook = plugins.AfterResponse
	if got := p.Handle(ev); got != nil {
		t.Errorf("Handle(after_response) = %+v, want nil", got)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		config  string
		wantErr string
	}{
		{name: "absent"},
		{name: "all fields", config: `{"max_turns": 1, "max_run_tokens": 1, "max_run_cost_usd": 0.01, "max_session_tokens": 1, "max_session_cost_usd": 0.01, "priority": 1}`},
		{name: "unknown field", config: `{"max_tokens": 5}`, wantErr: `unknown field "max_tokens"`},
		{name: "negative turns", config: `{"max_turns": -1}`, wantErr: "max_turns is negative"},
		{name: "negative cost", config: `{"max_session_cost_usd": -0.1}`, wantErr: "max_session_cost_usd is negative"},
		{name: "fractional turns", config: `{"max_turns": 1.5}`, wantErr: "cannot unmarshal"},
		{name: "bad priority", config: `{"priority": 2000}`, wantErr: "priority 2000 is outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := limits.New(json.RawMessage(tt.config))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if p.Name() != "limits" || !reflect.DeepEqual(p.Hooks(), []plugins.Hook{plugins.BeforeRequest}) {
					t.Errorf("Name, Hooks = %q, %v", p.Name(), p.Hooks())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New = %v; want an error containing %q", err, tt.wantErr)
			}
		})
	}
	if d := limits.DefaultConfig(); d != (limits.Config{MaxTurns: 100, Priority: 50}) {
		t.Errorf("DefaultConfig = %+v", d)
	}
}
