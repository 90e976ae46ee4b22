package fsm

import (
	"github.com/looplab/fsm"
)

// Mermaid returns the state diagram as a Mermaid stateDiagram-v2, rendered
// by looplab's visualizer from the transition table, starting in idle. The
// output is deterministic: transitions are sorted by source state, then
// event.
func Mermaid() string {
	out, err := fsm.VisualizeWithType(newLooplab(), fsm.MERMAID)
	if err != nil {
		// MERMAID is a constant looplab knows; an error is a looplab bug.
		panic("fsm: looplab cannot render Mermaid: " + err.Error())
	}
	return out
}
