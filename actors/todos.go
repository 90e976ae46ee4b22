package actors

import (
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/builtin"
)

// todoWritten replaces the todo list with what a successful todo_write
// call c wrote (builtin.TodoWrite), and tells it; calls of other tools
// are left alone.
func (s *session) todoWritten(c *call, res *tools.Result) {
	if !builtin.IsTodoWrite(c.tool) || res.IsError {
		return
	}
	todos, err := builtin.ParseTodos(c.args)
	if err != nil { // the tool checked the same arguments: cannot happen
		return
	}
	if todos == nil {
		todos = []*eventsv1.Todo{}
	}
	s.notes.todos = todos
	s.touch()
	s.emit(&eventsv1.TodoChange{Todos: todos})
}
