package a2aserver_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"go.uber.org/goleak"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/server/a2aserver"
	"github.com/tack-run/tack/server/a2aserver/a2aservertest"
	"github.com/tack-run/tack/server/agentrun/agentruntest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestA2A runs the checks against the handler alone, every caller
// "local".
func TestA2A(t *testing.T) {
	rt, err := tack.New(append(agentruntest.Options(t), agentruntest.Plugins()...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	a, err := a2aserver.New(rt, a2aserver.Options{User: func(context.Context) string { return "local" }})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(a)
	defer hs.Close()
	a2aservertest.Run(t, a2aservertest.Server{URL: hs.URL, Runtime: rt})
}
