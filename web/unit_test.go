package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/tack-run/tack/internal/nodetest"
)

// TestUnits runs the UI's own tests in Node, without a browser (the
// reducer from events to view state, the context-usage format, the event
// stream parser, safe Markdown), and the type checker, after installing
// the packages of web/package-lock.json.
func TestUnits(t *testing.T) {
	n := nodetest.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n.Install(ctx, t, ".")
	t.Logf("npm test:\n%s", n.Run(ctx, t, ".", n.NPM, "test", "--silent"))
	n.Run(ctx, t, ".", n.NPM, "run", "--silent", "typecheck")
}
