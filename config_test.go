package tack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/config"
	"github.com/tack-run/tack/store/memory"
)

// What Validate refuses, with the error New then returns; DefaultConfig
// itself is valid.
func TestConfigValidate(t *testing.T) {
	if err := tack.DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
	for _, tc := range []struct {
		name string
		opt  tack.Option
		want string
	}{
		{"no timeout", tack.WithRequestTimeout(0), "tack: the request timeout must be positive, not 0s"},
		{"negative timeout", tack.WithRequestTimeout(-time.Second), "tack: the request timeout must be positive, not -1s"},
		{"elsewhere without a store", tack.WithSessionsElsewhere(nowhere{}), "tack: WithSessionsElsewhere needs WithStore: the store the sessions are kept in, for their owners and the list"},
		{"unknown default agent", tack.WithAgents(map[string]tack.Agent{"a": {Model: "script:demo"}}, "b"), `tack: the default agent "b" is not an agent`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tack.DefaultConfig()
			tc.opt(&c)
			err := c.Validate()
			if got := errString(err); got != tc.want {
				t.Fatalf("Validate = %q, want %q", got, tc.want)
			}
			rt, err := tack.New(tc.opt)
			if got := errString(err); got != tc.want {
				t.Fatalf("New = %q, want %q", got, tc.want)
			}
			if rt != nil {
				rt.Close()
			}
		})
	}
}

// nowhere is an Elsewhere Validate refuses before anything calls it.
type nowhere struct{ tack.Elsewhere }

// A Config made by hand makes the same runtime the options do.
func TestNewFromConfig(t *testing.T) {
	c := tack.DefaultConfig()
	c.Sessions.Store = memory.New()
	c.Sessions.PromptLimit = 1
	rt, err := tack.NewFromConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	// The first run waits a minute for its model, so the next prompt is
	// queued and the one after finds the queue full.
	s, err := rt.Spawn(tack.SessionConfig{Script: []byte(`{"turns":[{"delay_ms":60000,"text":"late"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.Prompt(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctx, "two"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctx, "three"); tack.Code(err) != "queue_full" {
		t.Fatalf("a second queued prompt with PromptLimit 1: %v, want queue_full", err)
	}
}

// TestDefaultModelWithoutItsKey: a session that names no model gets the
// configured default_model; when that model cannot be had (its key is not
// set) the answer says so, unknown_model, not that no default_model is
// configured, which a config without one answers.
func TestDefaultModelWithoutItsKey(t *testing.T) {
	c, err := config.Parse([]byte(`{"default_model": "local/m", "providers": {"local": {"base_url": "http://127.0.0.1:1/v1",
		"api_key_env": "TACK_TEST_KEY_NEVER_SET", "models": {"m": {}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := tack.New(tack.WithModels(config.NewResolver(c)))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	_, err = rt.Spawn(tack.SessionConfig{})
	if want := `unknown_model: unknown model "local/m": $TACK_TEST_KEY_NEVER_SET is not set: it holds the API key of provider "local"`; err == nil || err.Error() != want {
		t.Fatalf("Spawn without a model: %v, want %q", err, want)
	}
	none, err := tack.New()
	if err != nil {
		t.Fatal(err)
	}
	defer none.Close()
	if _, err := none.Spawn(tack.SessionConfig{}); tack.Code(err) != "bad_request" || !strings.Contains(err.Error(), "no default_model is configured") {
		t.Fatalf("Spawn without a model or a default: %v", err)
	}
}
