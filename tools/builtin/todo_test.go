package builtin_test

import (
	"testing"

	"github.com/tack-run/tack/tools/builtin"
)

// TestParseTodos: the error names the todo and its status.
func TestParseTodos(t *testing.T) {
	if _, err := builtin.ParseTodos([]byte(`{"todos":[{"text":"a","status":"done"},{"text":"b","status":"later"}]}`)); err == nil ||
		err.Error() != `invalid arguments for todo_write: /todos/1/status: "later" is not pending, in_progress or done` {
		t.Fatalf("err = %v", err)
	}
	if _, err := builtin.ParseTodos([]byte(`{"todos":"x"}`)); err == nil {
		t.Fatal("a list that is not one was taken")
	}
}

// TestIsTodoWrite: only TodoWrite's tool is todo_write.
func TestIsTodoWrite(t *testing.T) {
	if !builtin.IsTodoWrite(builtin.TodoWrite()) || builtin.IsTodoWrite(builtin.Demo()[0]) {
		t.Fatal("IsTodoWrite is wrong")
	}
}
