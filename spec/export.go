package spec

import "encoding/json"

// createObject is a create_session object less its session, as an
// export's config holds it.
type createObject struct {
	Model string `json:"model,omitempty"`
	settings
}

// Export is the create_session object (less its session) that makes a
// session like s, as an exported session's config holds it: the model or
// the inline script, and the options, without a sub-agent's own depth (an
// import starts at depth 0).
func (s *Session) Export() []byte {
	o := createObject{settings: s.settings()}
	if len(s.Script) == 0 {
		o.Model = s.Model
	}
	if c := o.Subagents; c != nil {
		d := *c
		d.Depth = 0
		o.Subagents = &d
		if d.MaxDepth == nil && d.Model == "" && len(d.Tools) == 0 && d.InheritPlugins == nil {
			o.Subagents = nil
		}
	}
	b, _ := json.Marshal(o) // strings, numbers, bools and raw JSON: cannot fail
	return b
}
