package openai

import (
	"encoding/json"
	"testing"
)

// TestCalls feeds tool call deltas as servers send them (one JSON array
// per chunk) and checks the assembled calls.
func TestCalls(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   []string
	}{
		{
			name: "openai pieces by index",
			chunks: []string{
				`[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":""}}]`,
				`[{"index":0,"function":{"arguments":"{\"x\":"}}]`,
				`[{"index":0,"function":{"arguments":"1}"}}]`,
			},
			want: []string{`a f {"x":1}`},
		},
		{
			name: "every call at index 0 with its own id",
			chunks: []string{
				`[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"n\":"}}]`,
				`[{"index":0,"function":{"arguments":"1}"}}]`,
				`[{"index":0,"id":"b","function":{"name":"g","arguments":"{\"n\":"}}]`,
				`[{"index":0,"function":{"arguments":"2}"}}]`,
			},
			want: []string{`a f {"n":1}`, `b g {"n":2}`},
		},
		{
			name: "id repeated in every delta",
			chunks: []string{
				`[{"id":"a","function":{"name":"f","arguments":"{\"n\""}}]`,
				`[{"id":"a","function":{"arguments":":1}"}}]`,
			},
			want: []string{`a f {"n":1}`},
		},
		{
			name: "name repeated in pieces without index",
			chunks: []string{
				`[{"id":"a","function":{"name":"f","arguments":"{\"n\""}}]`,
				`[{"function":{"name":"f","arguments":":1}"}}]`,
			},
			want: []string{`a f {"n":1}`},
		},
		{
			name: "index order wins over arrival",
			chunks: []string{
				`[{"index":1,"id":"b","function":{"name":"g","arguments":"{}"}}]`,
				`[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]`,
			},
			want: []string{`a f {}`, `b g {}`},
		},
		{
			name: "two calls in one chunk",
			chunks: []string{
				`[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}},{"index":1,"id":"b","function":{"name":"g","arguments":"{}"}}]`,
			},
			want: []string{`a f {}`, `b g {}`},
		},
		{
			name: "id used twice in one response",
			chunks: []string{
				`[{"index":0,"id":"x","function":{"name":"f","arguments":"{}"}}]`,
				`[{"index":1,"function":{"name":"g","arguments":"{}"}}]`,
				`[{"index":1,"id":"x"}]`,
			},
			want: []string{`x f {}`, `<gen> g {}`},
		},
		{
			name: "one id for calls at distinct indexes",
			chunks: []string{
				`[{"index":0,"id":"0","function":{"name":"f","arguments":"{\"a\":"}}]`,
				`[{"index":1,"id":"0","function":{"name":"g","arguments":"{}"}}]`,
				`[{"index":0,"id":"0","function":{"arguments":"1}"}}]`,
			},
			want: []string{`0 f {"a":1}`, `<gen> g {}`},
		},
		{
			name:   "empty arguments become {}",
			chunks: []string{`[{"index":0,"id":"a","function":{"name":"f","arguments":""}}]`},
			want:   []string{`a f {}`},
		},
		{
			name:   "invalid arguments kept verbatim",
			chunks: []string{`[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"n\": 1"}}]`},
			want:   []string{`a f {"n": 1`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cs calls
			for _, c := range tt.chunks {
				var deltas []toolCallDelta
				if err := json.Unmarshal([]byte(c), &deltas); err != nil {
					t.Fatal(err)
				}
				for i := range deltas {
					cs.add(&deltas[i])
				}
			}
			var got []string
			for _, c := range cs.done() {
				got = append(got, showCall(c))
			}
			equal(t, "calls", got, tt.want)
		})
	}
}
