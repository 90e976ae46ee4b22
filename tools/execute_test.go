package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/tack-run/tack/tools"
)

func TestExecute(t *testing.T) {
	tests := []struct {
		name string
		run  tools.RunFunc
		args string
		want tools.Result
	}{
		{name: "output",
			run:  func(context.Context, json.RawMessage, func(string)) (string, error) { return "done", nil },
			want: tools.Result{Content: "done"}},
		{name: "error becomes an error result",
			run: func(context.Context, json.RawMessage, func(string)) (string, error) {
				return "ignored", errors.New("disk full")
			},
			want: tools.Result{Content: "disk full", IsError: true}},
		{name: "panic becomes an error result",
			run:  func(context.Context, json.RawMessage, func(string)) (string, error) { panic("boom") },
			want: tools.Result{Content: "tool panicked: boom", IsError: true}},
		{name: "panic with an error value",
			run: func(context.Context, json.RawMessage, func(string)) (string, error) {
				var m map[string]int
				m["x"] = 1 // assignment to entry in nil map
				return "", nil
			},
			want: tools.Result{Content: "tool panicked: assignment to entry in nil map", IsError: true}},
		{name: "empty args arrive as an empty object", args: "",
			run: func(_ context.Context, args json.RawMessage, _ func(string)) (string, error) {
				return string(args), nil
			},
			want: tools.Result{Content: "{}"}},
		{name: "args are passed through",
			args: `{"ms":1}`,
			run: func(_ context.Context, args json.RawMessage, _ func(string)) (string, error) {
				return string(args), nil
			},
			want: tools.Result{Content: `{"ms":1}`}},
		{name: "nil update may be called",
			run: func(_ context.Context, _ json.RawMessage, update func(string)) (string, error) {
				update("partial")
				return "ok", nil
			},
			want: tools.Result{Content: "ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := tools.Define(tools.Spec{Name: "t"}, tt.run)
			got := tools.Execute(context.Background(), tool, json.RawMessage(tt.args), nil)
			if got != tt.want {
				t.Errorf("Execute = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestExecuteStreamsUpdates(t *testing.T) {
	tool := tools.Define(tools.Spec{Name: "t"}, func(_ context.Context, _ json.RawMessage, update func(string)) (string, error) {
		update("a")
		update("b")
		return "ab", nil
	})
	var got []string
	res := tools.Execute(context.Background(), tool, nil, func(p string) { got = append(got, p) })
	if res.Content != "ab" || len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("Execute = %+v, updates %q", res, got)
	}
}
