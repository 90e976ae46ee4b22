package fsm

import (
	"context"
	"errors"
	"slices"

	"github.com/looplab/fsm"
)

// busy are the states of a run in progress.
var busy = []string{string(Running), string(Streaming), string(ExecutingTools)}

// table is the transition table, shared by every looplab FSM of the package.
// looplab only reads it.
var table = fsm.Events{
	{Name: string(Start), Src: []string{string(Idle)}, Dst: string(Running)},
	{Name: string(FirstChunk), Src: []string{string(Running)}, Dst: string(Streaming)},
	{Name: string(ToolCalls), Src: []string{string(Running), string(Streaming)}, Dst: string(ExecutingTools)},
	{Name: string(NextTurn), Src: busy, Dst: string(Running)},
	{Name: string(Finish), Src: busy, Dst: string(Idle)},
	{Name: string(Abort), Src: busy, Dst: string(Idle)},
	{Name: string(Resume), Src: []string{string(Idle)}, Dst: string(ExecutingTools)},
}

// newLooplab builds a looplab FSM over table, in state idle, without
// callbacks.
func newLooplab() *fsm.FSM {
	return fsm.NewFSM(string(Idle), table, nil)
}

// outcome is what looplab does with one event in one state: the state it
// moves to, or the error it refuses the event with.
type outcome struct {
	to  State
	err error
}

// outcomes holds looplab's answer for every event in every state, indexed
// by their positions in states and events (see the package documentation,
// # Speed).
var outcomes = compile()

// compile asks one looplab FSM, once, what every event does in every state.
func compile() (o [len(states)][len(events)]outcome) {
	f := newLooplab()
	for i, s := range states {
		for j, e := range events {
			o[i][j] = looplabFire(f, s, e)
		}
	}
	return o
}

// looplabFire fires e at f set to state from. A self-transition, which
// looplab reports as a NoTransitionError without a cause, succeeds.
func looplabFire(f *fsm.FSM, from State, e Event) outcome {
	f.SetState(string(from))
	if err := f.Event(context.Background(), string(e)); err != nil {
		var same fsm.NoTransitionError
		if !errors.As(err, &same) || same.Err != nil {
			return outcome{to: from, err: err}
		}
	}
	return outcome{to: State(f.Current())}
}

// lookup returns looplab's outcome for e in from: from the compiled table
// for the package's events, and from looplab itself for any other (which
// it refuses as unknown).
func lookup(from State, e Event) outcome {
	j := slices.Index(events[:], e)
	if j < 0 {
		return looplabFire(newLooplab(), from, e)
	}
	return outcomes[max(slices.Index(states[:], from), 0)][j]
}
