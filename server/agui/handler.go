package agui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/httperror"
)

// DefaultMaxBody bounds a RunAgentInput when Handler.MaxBody is 0.
const DefaultMaxBody = 1 << 20

// subscriptionBuffer is how many events a stream may fall behind the
// session before it loses some (and gets events_lost).
const subscriptionBuffer = 8192

// abortTimeout bounds the abort sent when a client goes away.
const abortTimeout = 5 * time.Second

// Handler serves `POST /v1/sessions/{id}/agui`: it reads an AG-UI
// RunAgentInput and answers with the run's AG-UI events as server-sent
// events. Mount it on a pattern with an {id} wildcard.
type Handler struct {
	// Session finds the session the path names for the request's caller:
	// a *tack.Error with code invalid_session for one that does not exist
	// or is not the caller's.
	Session func(r *http.Request, id string) (*tack.Session, error)
	// MaxBody bounds the request body in bytes; 0 means DefaultMaxBody.
	MaxBody int64
	// Keepalive is how often an idle stream gets an SSE comment; 0 means
	// every 15 seconds.
	Keepalive time.Duration
	// Audit, when set, is told of each approval a resume answers: action
	// "approve" or "reject", the approval id, and the answer's error (nil
	// once it is done). ctx is the request's.
	Audit func(ctx context.Context, action, session, approvalID string, err error)
}

// step is one command a run sends before it streams; an approval's
// answer names itself (action and ref) for Handler.Audit.
type step struct {
	do          func(context.Context) error
	action, ref string
}

// New returns a handler whose sessions come from rt, by id, for every
// caller: for a server without users.
func New(rt *tack.Runtime) *Handler {
	return &Handler{Session: func(_ *http.Request, id string) (*tack.Session, error) { return rt.Session(id) }}
}

// ServeHTTP answers one AG-UI request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		httperror.Write(w, &httperror.StatusError{Status: http.StatusMethodNotAllowed,
			Err: &tack.Error{Code: events.CodeUnknownCommand, Message: r.Method + " is not allowed here; AG-UI runs are POSTed"}})
		return
	}
	in, err := h.input(w, r)
	if err != nil {
		httperror.Write(w, err)
		return
	}
	s, err := h.Session(r, in.ThreadID)
	if err != nil {
		httperror.Write(w, err)
		return
	}
	run, err := h.begin(r.Context(), s, in)
	if err != nil {
		httperror.Write(w, err)
		return
	}
	defer run.sub.Close()
	h.stream(r.Context(), w, s, run)
}

// input reads and checks the request's RunAgentInput.
func (h *Handler) input(w http.ResponseWriter, r *http.Request) (*RunAgentInput, error) {
	limit := h.MaxBody
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, &httperror.StatusError{Status: http.StatusRequestEntityTooLarge, Err: &tack.Error{Code: events.CodeBadRequest,
			Message: fmt.Sprintf("the body is over the limit of %d bytes", limit)}}
	}
	if err != nil {
		return nil, &tack.Error{Code: events.CodeBadRequest, Message: "reading the body: " + err.Error()}
	}
	in, err := ParseInput(body)
	if err != nil {
		return nil, &tack.Error{Code: events.CodeBadRequest, Message: err.Error()}
	}
	if id := r.PathValue("id"); in.ThreadID != id {
		return nil, &tack.Error{Code: events.CodeBadRequest, Message: fmt.Sprintf("threadId %q is not the session %q of the path", in.ThreadID, id)}
	}
	return in, nil
}

// run is one AG-UI run in progress.
type run struct {
	sub *tack.Subscription
	tr  *Translator
}

// begin subscribes to the session and starts the run: it sends the prompt,
// or answers the interrupts the input resumes. Nothing is sent to the
// client yet, so a failure is an ordinary error response.
func (h *Handler) begin(ctx context.Context, s *tack.Session, in *RunAgentInput) (*run, error) {
	st, err := s.State(ctx)
	if err != nil {
		return nil, err
	}
	var (
		do      []step
		waiting []Interrupt
	)
	if len(in.Resume) > 0 {
		if do, waiting, err = resume(s, st, in.Resume); err != nil {
			return nil, err
		}
	} else {
		text, images, err := in.PromptInput()
		if err != nil {
			return nil, &tack.Error{Code: events.CodeBadRequest, Message: err.Error()}
		}
		if st.GetState() != "idle" {
			return nil, &tack.Error{Code: events.CodeBusy, Message: fmt.Sprintf("session %q is %s; an AG-UI run starts only when it is idle", s.ID(), st.GetState())}
		}
		do = []step{{do: func(ctx context.Context) error {
			_, err := s.Prompt(ctx, text, tack.PromptOptions{Images: images})
			return err
		}}}
	}
	// Since past any seq: live events only, from before the first command.
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Since: math.MaxUint64, Buffer: subscriptionBuffer})
	if err != nil {
		return nil, err
	}
	for _, st := range do {
		err := st.do(ctx)
		if st.action != "" && h.Audit != nil {
			h.Audit(ctx, st.action, s.ID(), st.ref, err)
		}
		if err != nil {
			_ = sub.Close()
			return nil, err
		}
	}
	return &run{sub: sub, tr: NewTranslator(in.ThreadID, in.RunID, waiting...)}, nil
}

// stream sends the run's events until it ends or the client goes away;
// a client that goes away aborts the run.
func (h *Handler) stream(ctx context.Context, w http.ResponseWriter, s *tack.Session, run *run) {
	out, err := newSSE(w)
	if err == nil {
		err = out.send(run.tr.Start())
	}
	if err == nil {
		err = h.settle(ctx, s, run, out)
	}
	every := h.Keepalive
	if every <= 0 {
		every = 15 * time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for err == nil && !run.tr.Done() {
		select {
		case ev, ok := <-run.sub.C:
			if !ok {
				err = out.send(run.tr.Fail(events.CodeNotAlive, fmt.Sprintf("session %q closed", s.ID())))
				continue
			}
			err = out.send(run.tr.Next(ev))
			if err == nil && ev.GetEventsLost() != nil {
				// What was lost may have ended the run.
				err = h.settle(ctx, s, run, out)
			}
		case <-tick.C:
			err = out.keepalive()
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if !run.tr.Done() {
		// The client left mid-run: on this endpoint that stops the run, and
		// what it committed stays.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
		defer cancel()
		_ = s.Abort(actx, tack.AbortOptions{KillTools: events.KillKillable})
	}
}

// settle handles a run that is over, or waiting, by the time the commands
// were answered: every event up to the state read is in the subscription
// by then, so when the session is idle after them and they did not end
// the run, nothing more will — the run ends now, with the holds still
// waiting as its interrupts.
func (h *Handler) settle(ctx context.Context, s *tack.Session, run *run, out *sseWriter) error {
	st, err := s.State(ctx)
	if err != nil {
		return err
	}
	for !run.tr.Done() {
		select {
		case ev, ok := <-run.sub.C:
			if !ok {
				return nil // the loop in stream reports it
			}
			if err := out.send(run.tr.Next(ev)); err != nil {
				return err
			}
			continue
		default:
		}
		if st.GetState() == "idle" {
			return out.send(run.tr.Idle())
		}
		return nil
	}
	return nil
}

// resume plans the commands that answer the resume entries, from the
// session's pending approvals and question in st, and returns the holds
// the entries leave waiting.
func resume(s *tack.Session, st *eventsv1.SessionState, entries []ResumeEntry) ([]step, []Interrupt, error) {
	var do []step
	seen := map[string]bool{}
	for i, e := range entries {
		if seen[e.InterruptID] {
			return nil, nil, &tack.Error{Code: events.CodeBadRequest, Message: fmt.Sprintf("resume[%d] answers interrupt %q a second time", i, e.InterruptID)}
		}
		seen[e.InterruptID] = true
		f, err := answer(s, st, i, e)
		if err != nil {
			return nil, nil, err
		}
		do = append(do, f)
	}
	var waiting []Interrupt
	for _, a := range st.GetPendingApprovals() {
		if !seen[a.GetApprovalId()] {
			waiting = append(waiting, ApprovalInterrupt(a.GetApprovalId(), a.GetTool(), a.GetCallId(), a.GetArgs().GetJson(), ""))
		}
	}
	if q := st.GetPendingQuestion(); q != nil && !seen[q.GetRef()] {
		waiting = append(waiting, QuestionInterrupt(q.GetRef(), q.GetQuestion(), q.GetOptions()))
	}
	return do, waiting, nil
}

// answer is the command for resume entry i: approve or reject for an
// approval (cancelled rejects), respond for a question (cancelled aborts
// the run, which rejects the question). Cancelling what is no longer
// pending does nothing; answering it is no_pending_approval.
func answer(s *tack.Session, st *eventsv1.SessionState, i int, e ResumeEntry) (step, error) {
	id := e.InterruptID
	reject := func(reason string) step {
		return step{do: func(ctx context.Context) error { return s.Reject(ctx, id, reason) }, action: "reject", ref: id}
	}
	for _, a := range st.GetPendingApprovals() {
		if a.GetApprovalId() != id {
			continue
		}
		if e.Status == StatusCancelled {
			return reject("cancelled"), nil
		}
		ans, err := parseApproval(i, e.Payload)
		if err != nil {
			return step{}, &tack.Error{Code: events.CodeBadRequest, Message: err.Error()}
		}
		if *ans.Approved {
			return step{do: func(ctx context.Context) error { return s.Approve(ctx, id, ans.Always) }, action: "approve", ref: id}, nil
		}
		reason := ans.Reason
		if reason == "" {
			reason = "rejected by the user"
		}
		return reject(reason), nil
	}
	if q := st.GetPendingQuestion(); q != nil && q.GetRef() == id {
		if e.Status == StatusCancelled {
			return step{do: func(ctx context.Context) error {
				return s.Abort(ctx, tack.AbortOptions{KillTools: events.KillKillable})
			}}, nil
		}
		text, err := parseResponse(i, e.Payload)
		if err != nil {
			return step{}, &tack.Error{Code: events.CodeBadRequest, Message: err.Error()}
		}
		return step{do: func(ctx context.Context) error { return s.Respond(ctx, id, text) }}, nil
	}
	if e.Status == StatusCancelled {
		// Nothing left to cancel (it timed out, or another client answered
		// it): accepted, so that the client's thread can move on.
		return step{do: func(context.Context) error { return nil }}, nil
	}
	return step{}, &tack.Error{Code: events.CodeNoPendingApproval, Message: fmt.Sprintf("resume[%d]: no approval or question %q is pending in session %q", i, id, s.ID())}
}
