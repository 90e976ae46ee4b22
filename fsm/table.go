package fsm

import (
	"sync"

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

// engines lends looplab FSMs to Fire and Can, which set them to the
// Machine's state before use, so a Machine need not own one (see the
// package documentation, # Memory).
var engines = sync.Pool{New: func() any { return newLooplab() }}
