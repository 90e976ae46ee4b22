package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/spec"
)

func (s *session) switchModel(ctx actor.Context, m *SwitchModel) {
	s.setModel(m.Model, m.StaysLoaded)
	s.reply(ctx, &eventsv1.Reply{})
}

// setModel makes the next request use m: the user's switch_model and a
// plugin's. The stored configuration names the new model from the next
// write on, so a restored session comes back on it; stays says m would
// not be had again from its name (Spec.StaysLoaded).
func (s *session) setModel(m *llm.Model, stays bool) {
	from := s.spec.Model.Name
	s.spec.Model, s.spec.StaysLoaded = m, stays
	s.reconfigure(func(c *spec.Session) { c.Model, c.Script = m.Name, nil })
	s.p.switched = true
	s.touch()
	s.emit(&eventsv1.ModelSwitched{From: from, To: m.Name})
}

// modelState is the model's own state to store, nil when it keeps none.
func modelState(m *llm.Model) []byte {
	if p, ok := m.Provider.(llm.Stateful); ok {
		return p.SaveState()
	}
	return nil
}

// loadModelState gives the model's provider the state it had stored; a
// state it cannot take is logged, and the provider starts afresh.
func (s *session) loadModelState(state []byte) {
	m, ok := s.spec.Model.Provider.(llm.Stateful)
	if !ok || len(state) == 0 {
		return
	}
	if err := m.LoadState(state); err != nil {
		s.home.env.logger().Warn("the stored model state was not taken up", zap.String("session", s.spec.ID), zap.Error(err))
	}
}

// switchAsync resolves a model a plugin asked for off the actor (a script
// file may have to be read) and switches once it is resolved; the
// request in flight, if any, finishes on the old model.
func (s *session) switchAsync(name string) {
	if s.home.env.Models == nil {
		s.emit(&eventsv1.Error{Code: events.CodeUnknownModel, Message: fmt.Sprintf("cannot switch to %q: the runtime resolves no models", name)})
		return
	}
	models, home := s.home.env.Models, s.home
	go func() {
		m, err := models.Resolve(name, nil)
		stays := err == nil && home.env.StaysLoaded(m, name, nil)
		home.post(&modelResolved{name: name, model: m, stays: stays, err: err})
	}()
}

// modelResolved applies a plugin's switch_model.
func (s *session) modelResolved(m *modelResolved) {
	if m.err != nil {
		s.emit(&eventsv1.Error{Code: events.CodeUnknownModel, Message: fmt.Sprintf("cannot switch to %q: %v", m.name, m.err)})
		return
	}
	s.setModel(m.model, m.stays)
}
