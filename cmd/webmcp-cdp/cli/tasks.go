package cli

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
)

// Tasks are the flags of the Tasks extension (--tasks, --task-after) of
// the serving commands. Each value is checked as it is parsed.
type Tasks struct {
	off   tasksMode
	after taskAfter
}

// Register adds --tasks and --task-after.
func (t *Tasks) Register(fs *pflag.FlagSet) {
	t.after = taskAfter(mcpserver.DefaultTaskAfter)
	fs.Var(&t.off, "tasks", "the MCP Tasks extension for clients that declare it: auto (a page tool call still running after --task-after becomes a task the client polls) or off")
	OneOf(fs, "tasks", []string{"auto", "off"})
	fs.Var(&t.after, "task-after", "how long a call that may become a task runs in the client's request first; one that ends by then answers at once")
}

// Options returns the server's TaskOptions, with a budget of its own
// (shared by the spaces of an endpoint, which copy the options).
func (t *Tasks) Options() mcpserver.TaskOptions {
	return mcpserver.TaskOptions{Off: bool(t.off), After: time.Duration(t.after), Budget: mcpserver.NewTaskBudget(mcpserver.DefaultMaxTasks)}
}

// tasksMode is --tasks: true for off.
type tasksMode bool

func (m *tasksMode) String() string {
	if *m {
		return "off"
	}
	return "auto"
}

func (m *tasksMode) Set(v string) error {
	switch v {
	case "auto":
		*m = false
	case "off":
		*m = true
	default:
		return fmt.Errorf("%q: must be auto or off", v)
	}
	return nil
}

func (*tasksMode) Type() string { return "string" }

// taskAfter is --task-after: a positive duration.
type taskAfter time.Duration

func (a *taskAfter) String() string { return time.Duration(*a).String() }

func (a *taskAfter) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("%q: not a duration such as 1s or 500ms: %w", v, err)
	}
	if d <= 0 {
		return fmt.Errorf("%s: must be positive", d)
	}
	*a = taskAfter(d)
	return nil
}

func (*taskAfter) Type() string { return "duration" }
