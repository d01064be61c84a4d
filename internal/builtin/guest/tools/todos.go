package tools

import (
	"fmt"
	"strings"
)

// Todo is one task of stateless-todo-list.
type Todo struct {
	Content    string `json:"content"`
	ActiveForm string `json:"activeForm"`
	Status     string `json:"status"`
}

type todoArgs struct {
	Todos []Todo `json:"todos"`
}

// TodoResult is write_todos's result: the list as validated, counts and
// warnings. Nothing is stored: the list lives in the conversation.
type TodoResult struct {
	Success    bool     `json:"success"`
	Total      int      `json:"total"`
	Pending    int      `json:"pending"`
	InProgress int      `json:"in_progress"`
	Completed  int      `json:"completed"`
	Todos      []Todo   `json:"todos"`
	Warnings   []string `json:"warnings,omitempty"`
}

// Warnings of write_todos (spec 003).
const (
	WarnNoneInProgress = "no task is in_progress while tasks are pending: mark the task you are working on as in_progress before you start it"
	WarnManyInProgress = "%d tasks are in_progress: exactly one task should be in_progress at a time"
)

// WriteTodos is stateless-todo-list's write_todos.
var WriteTodos = wrap(writeTodos)

func writeTodos(a todoArgs) (TodoResult, error) {
	if a.Todos == nil {
		return TodoResult{}, invalid("todos is missing: pass the complete list (an empty list clears it)")
	}
	r := TodoResult{Success: true, Total: len(a.Todos), Todos: make([]Todo, len(a.Todos))}
	for i, t := range a.Todos {
		t.Content, t.ActiveForm = strings.TrimSpace(t.Content), strings.TrimSpace(t.ActiveForm)
		switch {
		case t.Content == "":
			return TodoResult{}, invalid("todos[%d].content is empty: say what to do, e.g. \"Run tests\"", i)
		case t.ActiveForm == "":
			return TodoResult{}, invalid("todos[%d].activeForm is empty: say it in the present continuous, e.g. \"Running tests\"", i)
		}
		switch t.Status {
		case "pending":
			r.Pending++
		case "in_progress":
			r.InProgress++
		case "completed":
			r.Completed++
		default:
			return TodoResult{}, invalid("todos[%d].status %q: use pending, in_progress or completed", i, t.Status)
		}
		r.Todos[i] = t
	}
	switch {
	case r.InProgress == 0 && r.Pending > 0:
		r.Warnings = append(r.Warnings, WarnNoneInProgress)
	case r.InProgress > 1:
		r.Warnings = append(r.Warnings, fmt.Sprintf(WarnManyInProgress, r.InProgress))
	}
	return r, nil
}
