package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// list fetches the server's tools (all pages) as Tack tools; tools whose
// names Tack cannot offer a model are logged and left out.
func (s *server) list(ctx context.Context, cs *sdk.ClientSession) ([]*tool, error) {
	var out []*tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		mt, err := newTool(s, t)
		if err != nil {
			s.m.opts.Logger.Warn("MCP tool left out", zap.String("server", s.name), zap.String("tool", t.Name), zap.Error(err))
			continue
		}
		out = append(out, mt)
	}
	slices.SortFunc(out, func(a, b *tool) int { return strings.Compare(a.spec.Name, b.spec.Name) })
	return out, nil
}

// watch waits for c to end (the process exited, the HTTP session was
// lost, or close) and forgets it, so that the next use restarts the
// server.
func (s *server) watch(c *conn) {
	defer s.wg.Done()
	err := c.cs.Wait()
	close(c.done)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == c {
		s.conn = nil
		s.m.opts.Logger.Warn("MCP server stopped; it is restarted on next use", zap.String("server", s.name), zap.Int("pid", c.pid), zap.Error(err))
	}
}

// refresh lists the tools again after notifications/tools/list_changed
// and tells the Manager's watchers when the list differs. It takes the
// session from the notification: one can come during the handshake,
// before c has it.
func (s *server) refresh(c *conn, cs *sdk.ClientSession) {
	if !s.goroutine() {
		return
	}
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(s.m.base, s.m.opts.StartTimeout)
		defer cancel()
		ts, err := s.list(ctx, cs)
		if err != nil {
			s.m.opts.Logger.Warn("MCP tools/list after list_changed failed", zap.String("server", s.name), zap.Error(err))
			return
		}
		s.mu.Lock()
		same := sameTools(c.tools, ts)
		c.tools, c.refreshed = ts, true
		s.mu.Unlock()
		if !same {
			s.m.changed(s.name)
		}
	}()
}

// toolList returns the server's tools, starting it if need be.
func (s *server) toolList(ctx context.Context) ([]*tool, error) {
	c, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.tools, nil
}

// call runs tools/call of the tool remote with args. Cancelling ctx
// returns at once; the SDK then sends notifications/cancelled to the
// server. A lost connection is an error naming the server; the next
// call starts the server again.
func (s *server) call(ctx context.Context, remote string, args json.RawMessage, update func(string)) (string, error) {
	select {
	case s.sem <- struct{}{}:
		defer func() { <-s.sem }()
	case <-ctx.Done():
		return "", ctx.Err()
	}
	c, err := s.session(ctx)
	if err != nil {
		return "", err
	}
	params := &sdk.CallToolParams{Name: remote, Arguments: args}
	token := fmt.Sprintf("tack-%d", s.tokens.Add(1))
	params.SetProgressToken(token)
	s.progress.Store(token, update)
	defer s.progress.Delete(token)
	res, err := c.cs.CallTool(ctx, params)
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case err != nil && errors.As(err, new(*jsonrpc.Error)):
		return "", fmt.Errorf("MCP server %q: %w", s.name, err)
	case err != nil && (errors.Is(err, sdk.ErrConnectionClosed) || closedNow(c)):
		// Forget it now: watch does too, but only once the session has
		// wound down, and a call made before that would get it again.
		s.drop(c)
		return "", fmt.Errorf("MCP server %q stopped during the call: %v; it is restarted on next use", s.name, err)
	case err != nil:
		// Not an answer from the server: the connection is broken (an
		// HTTP server that went away, say). Drop it; the next use
		// connects again.
		s.drop(c)
		return "", fmt.Errorf("the connection to MCP server %q failed during the call: %v; it is made again on next use", s.name, err)
	}
	text := render(res)
	if res.IsError {
		return "", errors.New(text)
	}
	return text, nil
}

// closedNow reports whether c has ended, waiting a moment for the exit
// watcher: a call can fail on a broken pipe just before the SDK notices
// the connection is gone. (An error the server answered with is not
// looked at this way.)
func closedNow(c *conn) bool {
	t := time.NewTimer(100 * time.Millisecond)
	defer t.Stop()
	select {
	case <-c.done:
		return true
	case <-t.C:
		return false
	}
}

// onProgress passes notifications/progress to the update function of the
// call whose token it carries, as the line "progress 2/5\n" (with the
// server's message after a colon, when it sends one): a session relays
// the updates it has not taken yet together, which then read as lines.
func (s *server) onProgress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	p := req.Params
	f, ok := s.progress.Load(fmt.Sprint(p.ProgressToken))
	if !ok {
		return
	}
	text := fmt.Sprintf("progress %v", p.Progress)
	if p.Total > 0 {
		text += fmt.Sprintf("/%v", p.Total)
	}
	if p.Message != "" {
		text += ": " + p.Message
	}
	f.(func(string))(text + "\n")
}

// sameTools reports whether two tool lists have the same names, schemas
// and descriptions.
func sameTools(a, b []*tool) bool {
	return slices.EqualFunc(a, b, func(x, y *tool) bool {
		return x.spec.Name == y.spec.Name && x.spec.Description == y.spec.Description && string(x.spec.Schema) == string(y.spec.Schema)
	})
}
