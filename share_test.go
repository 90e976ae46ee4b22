package tack_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/llm/script"
)

// TestSessionsShareTheirConfigurationReadOnly: sessions made from one
// configuration hold one copy of it (spec.Share), so what one of them
// changes of its own — its model, its tools — must reach no other, and
// each exports its own.
func TestSessionsShareTheirConfigurationReadOnly(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "other.json"), []byte(`{"turns":[{"text":"hi"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	rt, err := tack.New(tack.WithScriptDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx := t.Context()
	cfg := tack.SessionConfig{Model: script.DemoModel, System: "be brief", Tools: []string{"echo"}}
	var ss []*tack.Session
	for range 3 {
		s, err := rt.Spawn(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
	}
	if err := ss[0].SwitchModel(ctx, "script:other.json"); err != nil {
		t.Fatal(err)
	}
	if err := ss[1].DetachTools(ctx, "echo"); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		model string
		echo  bool
	}{ss[0].ID(): {"script:other.json", true}, ss[1].ID(): {script.DemoModel, false}, ss[2].ID(): {script.DemoModel, true}}
	for _, s := range ss {
		e, err := s.Export(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Model  string   `json:"model"`
			System string   `json:"system"`
			Tools  []string `json:"tools"`
		}
		if err := json.Unmarshal(e.GetConfig().GetJson(), &got); err != nil {
			t.Fatal(err)
		}
		w := want[s.ID()]
		if e.GetSession() != s.ID() || got.Model != w.model || got.System != "be brief" || slices.Contains(got.Tools, "echo") != w.echo {
			t.Errorf("%s exported %s as %s, want %s, echo %v", s.ID(), e.GetSession(), e.GetConfig().GetJson(), w.model, w.echo)
		}
	}
}
