package http

import (
	"context"
	"encoding/json"
	"net/http"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Actions of the audit log (audit): what a user created, deleted or
// decided.
const (
	AuditCreate  = "create"  // create_session and import_session
	AuditFork    = "fork"    // fork: a new session from another
	AuditDelete  = "delete"  // delete_session (DELETE /v1/sessions/{id}) and close_session
	AuditApprove = "approve" // approve, and an AG-UI resume that approves
	AuditReject  = "reject"  // reject, and an AG-UI resume that rejects
)

// auditedCommands maps each command the audit log records to its action.
var auditedCommands = map[string]string{
	"create_session": AuditCreate, "import_session": AuditCreate, "fork": AuditFork, "close_session": AuditDelete, "delete_session": AuditDelete,
	"approve": AuditApprove, "reject": AuditReject,
}

// audit writes one line of the audit log, at info level on the server's
// logger (-v): who (user) did what (action) to which session, and how it
// went — "ok", or the error's protocol code and message. fields add what
// else the action names (the approval id, a grant). Every refusal the
// server decides on its own — a grant it does not give, a limit — is
// logged through here too, with its own action.
func (s *Server) audit(user, action, session string, err error, fields ...zap.Field) {
	outcome := "ok"
	if err != nil {
		outcome = tack.Code(err)
		fields = append(fields, zap.String("error", err.Error()))
	}
	s.opts.logger.Info("audit", append([]zap.Field{zap.String("action", action), zap.String("user", user),
		zap.String("session", session), zap.String("outcome", outcome)}, fields...)...)
}

// auditCommand logs a command the audit log records (auditedCommands),
// and any command refused as forbidden or rate_limited (its action is then the command's
// name): name ran on session id (for create_session, the session it made
// or was asked to make) with approvalID its approval, if any, and
// answered data or err.
func (s *Server) auditCommand(ctx context.Context, name, id, approvalID string, data proto.Message, err error) {
	action, ok := auditedCommands[name]
	if !ok && !refusal(err) {
		return
	}
	if !ok {
		action = name
	}
	var fields []zap.Field
	session := id
	if c, ok := data.(*eventsv1.Created); ok {
		if name == "fork" {
			fields = append(fields, zap.String("from", id))
		}
		session = c.GetSession()
	}
	if approvalID != "" {
		fields = append(fields, zap.String("approval_id", approvalID))
	}
	s.audit(userFrom(ctx), action, session, err, fields...)
}

// auditedFields reads, from a command's JSON body, the fields the audit
// log records beyond the path: the session create_session asks for, and
// the approval of approve and reject. A body that does not parse gives
// none (the command refuses it anyway).
func auditedFields(name string, body []byte) (session, approvalID string) {
	if _, ok := auditedCommands[name]; !ok || len(body) == 0 {
		return "", ""
	}
	var f struct {
		Session    string `json:"session"`
		ApprovalID string `json:"approval_id"`
	}
	_ = json.Unmarshal(body, &f)
	return f.Session, f.ApprovalID
}

// auditAGUI logs the approvals an AG-UI resume answers.
func (s *Server) auditAGUI(ctx context.Context, action, session, approvalID string, err error) {
	s.audit(userFrom(ctx), action, session, err, zap.String("approval_id", approvalID), zap.String("via", "agui"))
}

// refusal reports whether err is a refusal the audit log records: a grant
// not given (forbidden) or a limit reached (rate_limited).
func refusal(err error) bool {
	code := tack.Code(err)
	return err != nil && (code == events.CodeForbidden || code == events.CodeRateLimited)
}

// auditRefused logs a request the server refused before it became a
// command (a limit on requests), what naming the request.
func (s *Server) auditRefused(r *http.Request, what string, err error) {
	if refusal(err) {
		s.audit(userOf(r), what, r.PathValue("id"), err)
	}
}
