package a2a_test

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/tack-run/tack/tools/a2a"
)

// flood is a remote agent that answers every task with pieces pieces of
// size bytes each, then completes.
type flood struct{ pieces, size int }

func (f flood) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[sdk.Event, error] {
	return func(yield func(sdk.Event, error) bool) {
		if !yield(sdk.NewSubmittedTask(ec, ec.Message), nil) || !yield(sdk.NewStatusUpdateEvent(ec, sdk.TaskStateWorking, nil), nil) {
			return
		}
		var id sdk.ArtifactID
		for i := range f.pieces {
			piece := sdk.NewTextPart(strings.Repeat(string(rune('a'+i%26)), f.size))
			var ev sdk.Event
			if id == "" {
				a := sdk.NewArtifactEvent(ec, piece)
				id, ev = a.Artifact.ID, a
			} else {
				a := sdk.NewArtifactUpdateEvent(ec, id, piece)
				a.Append, ev = true, a
			}
			if !yield(ev, nil) {
				return
			}
		}
		yield(sdk.NewStatusUpdateEvent(ec, sdk.TaskStateCompleted, nil), nil)
	}
}

func (flood) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[sdk.Event, error] {
	return func(func(sdk.Event, error) bool) {}
}

// TestAnswerIsBounded: a remote agent that answers without end fills
// neither the call's result nor its updates past a2a.MaxAnswer; the
// result keeps the answer's head and tail and says what it left out.
//
// The answer is a little over MaxAnswer: a2a-go's server copies the
// whole task, every artifact piece so far, into its task store at each
// piece, so its work grows with the square of the pieces (2.5 MiB in 40
// pieces took that server 30 s under -race on a loaded 2-core machine).
func TestAnswerIsBounded(t *testing.T) {
	const pieces, size = 20, 56 << 10 // 1.09 MiB
	mux := http.NewServeMux()
	mux.Handle("POST /a2a/flood", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(flood{pieces, size})))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)

	updates, end := call(t, delegating(t, hs.URL, "flood"), nil)
	res := end.GetResult()
	if !end.GetOk() {
		t.Fatalf("end %v", end)
	}
	if len(res) > a2a.MaxAnswer+100 || !strings.Contains(res, "[output truncated: ") {
		t.Fatalf("result of %d bytes for an answer of %d (bound %d): %.80q…", len(res), pieces*size, a2a.MaxAnswer, res)
	}
	if !strings.HasPrefix(res, "aaaa") || !strings.HasSuffix(res, strings.Repeat(string(rune('a'+(pieces-1)%26)), 100)) {
		t.Errorf("the result lost the answer's head or tail: %.20q … %.20q", res[:20], res[len(res)-20:])
	}
	streamed := 0
	for _, u := range updates {
		streamed += len(u)
	}
	if streamed > a2a.MaxAnswer+size {
		t.Errorf("%d bytes streamed as updates, bound %d", streamed, a2a.MaxAnswer)
	}
}

// failing is a remote agent that answers every task with an error of msg.
type failing struct{ msg string }

func (f failing) Execute(context.Context, *a2asrv.ExecutorContext) iter.Seq2[sdk.Event, error] {
	return func(yield func(sdk.Event, error) bool) { yield(nil, errors.New(f.msg)) }
}

func (failing) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[sdk.Event, error] {
	return func(func(sdk.Event, error) bool) {}
}

// TestOnePieceAndAnErrorAreBounded: a single artifact piece past
// MaxAnswer streams no more than MaxAnswer of updates (the tool sends
// them in pieces of at most 4 KiB, output.TestUpdates; a session relays
// the pieces that come while it is busy in one event); an error the
// remote agent answers with, which becomes the call's result, keeps at
// most MaxAnswer of its text.
func TestOnePieceAndAnErrorAreBounded(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("POST /a2a/flood", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(flood{1, 3 * a2a.MaxAnswer})))
	mux.Handle("POST /a2a/fails", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(failing{strings.Repeat("E", 3*a2a.MaxAnswer)})))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)

	updates, end := call(t, delegating(t, hs.URL, "flood"), nil)
	streamed := 0
	for _, u := range updates {
		streamed += len(u)
	}
	if streamed > a2a.MaxAnswer+100 || len(end.GetResult()) > a2a.MaxAnswer+100 {
		t.Errorf("one piece of %d bytes: %d bytes of updates, a result of %d (bound %d)", 3*a2a.MaxAnswer, streamed, len(end.GetResult()), a2a.MaxAnswer)
	}
	_, end = call(t, delegating(t, hs.URL, "fails"), nil)
	if end.GetOk() || len(end.GetResult()) > a2a.MaxAnswer+100 || !strings.Contains(end.GetResult(), "[output truncated: ") {
		t.Errorf("an error answer of %d bytes: ok %v, a result of %d bytes (bound %d)", 3*a2a.MaxAnswer, end.GetOk(), len(end.GetResult()), a2a.MaxAnswer)
	}
}
