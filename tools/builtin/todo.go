package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/tools"
)

// TodoWriteName is the name of the tool that writes a session's todo list.
const TodoWriteName = "todo_write"

// todoStatuses are the statuses a todo may have.
var todoStatuses = []string{"pending", "in_progress", "done"}

const todoSchema = `{
  "type": "object",
  "properties": {
    "todos": {
      "type": "array",
      "description": "The whole list, in order; it replaces the list written before.",
      "items": {
        "type": "object",
        "properties": {
          "text": {"type": "string", "description": "What is to be done."},
          "status": {"type": "string", "description": "pending, in_progress or done."}
        },
        "required": ["text", "status"],
        "additionalProperties": false
      }
    }
  },
  "required": ["todos"],
  "additionalProperties": false
}`

// todoWrite is the tool todo_write. Running it only checks the list and
// says it back; the session that owns the list replaces it with the
// call's list (ParseTodos) once the call succeeds, so the list changes
// exactly when the model is told it did.
type todoWrite struct{}

// TodoWrite returns the tool todo_write (killable): it replaces the
// session's todo list with its todos, [{"text", "status"}] with status
// pending, in_progress or done; todo_change tells the new list and
// get_state carries it.
func TodoWrite() tools.Tool { return todoWrite{} }

// IsTodoWrite reports whether t is TodoWrite's tool, whose successful
// calls replace the session's todo list.
func IsTodoWrite(t tools.Tool) bool {
	_, ok := t.(todoWrite)
	return ok
}

func (todoWrite) Spec() tools.Spec {
	return tools.Spec{
		Name: TodoWriteName,
		Description: "Write your todo list for this task: the whole list, each item with its status " +
			"(pending, in_progress or done). Each call replaces the list.",
		Schema: json.RawMessage(todoSchema),
		Kind:   tools.Killable,
	}
}

func (todoWrite) Run(_ context.Context, args json.RawMessage, _ func(string)) (string, error) {
	todos, err := ParseTodos(args)
	if err != nil {
		return "", err
	}
	return formatTodos(todos), nil
}

// ParseTodos reads todo_write's arguments, which the schema has checked
// but for the statuses: a status out of the list is an error naming it.
func ParseTodos(args json.RawMessage) ([]*eventsv1.Todo, error) {
	var a struct {
		Todos []*eventsv1.Todo `json:"todos"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("invalid arguments for %s: %v", TodoWriteName, err)
	}
	for i, t := range a.Todos {
		if !slices.Contains(todoStatuses, t.GetStatus()) {
			return nil, fmt.Errorf("invalid arguments for %s: /todos/%d/status: %q is not pending, in_progress or done", TodoWriteName, i, t.GetStatus())
		}
	}
	return a.Todos, nil
}

// formatTodos is the result the model gets: the list as written, one
// line a todo.
func formatTodos(todos []*eventsv1.Todo) string {
	if len(todos) == 0 {
		return "The todo list is now empty."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The todo list is now (%d):", len(todos))
	for _, t := range todos {
		fmt.Fprintf(&b, "\n[%s] %s", t.Status, t.Text)
	}
	return b.String()
}
