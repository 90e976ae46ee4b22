package offload_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tack-run/tack/plugins/offload"
)

// TestNewOverflow: a configuration whose sum or product passes an int's
// largest is refused, not taken for the small or negative number it
// wraps around to.
func TestNewOverflow(t *testing.T) {
	for _, tt := range []struct{ name, config, wantErr string }{
		{"head past the largest sum", `{"head_chars": 9223372036854775807, "tail_chars": 1}`,
			"head_chars + tail_chars is 9223372036854775808, want less than the threshold's 80000 characters"},
		{"tail past the largest sum", `{"head_chars": 1, "tail_chars": 9223372036854775807}`,
			"head_chars + tail_chars is 9223372036854775808"},
		{"both largest", `{"head_chars": 9223372036854775807, "tail_chars": 9223372036854775807}`,
			"head_chars + tail_chars is 18446744073709551614"},
		{"half each", `{"head_chars": 4611686018427387904, "tail_chars": 4611686018427387904}`,
			"head_chars + tail_chars is 9223372036854775808"},
		// 4 × (2^62 + 1) wraps to 4 characters: every result over 4 offloaded.
		{"threshold wrapping to 4 characters", `{"threshold_tokens": 4611686018427387905, "head_chars": 1, "tail_chars": 1}`,
			"threshold_tokens is 4611686018427387905, want at most 2305843009213693951"},
		{"threshold largest", `{"threshold_tokens": 9223372036854775807}`,
			"threshold_tokens is 9223372036854775807, want at most 2305843009213693951"},
		{"threshold one past", `{"threshold_tokens": 2305843009213693952}`, "want at most 2305843009213693951"},
		{"threshold at most", `{"threshold_tokens": 2305843009213693951, "head_chars": 9223372036854775807, "tail_chars": 1}`,
			"head_chars + tail_chars is 9223372036854775808, want less than the threshold's 9223372036854775804 characters"},
		{"preview one short of the threshold", `{"threshold_tokens": 10, "head_chars": 39, "tail_chars": 0}`, ""},
		{"preview as long as the threshold", `{"threshold_tokens": 10, "head_chars": 39, "tail_chars": 1}`,
			"head_chars + tail_chars is 40"},
		{"largest threshold, largest preview", `{"threshold_tokens": 2305843009213693951, "head_chars": 9223372036854775802, "tail_chars": 1}`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := offload.New(json.RawMessage(tt.config))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New(%s): %v", tt.config, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New(%s) = %v; want an error containing %q", tt.config, err, tt.wantErr)
			}
		})
	}
}
