package cli

import (
	"io"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestTasksFlags: --tasks and --task-after are checked as they are parsed,
// and their defaults are auto and 1s.
func TestTasksFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args  []string
		off   bool
		after time.Duration
		bad   bool
	}{
		{nil, false, time.Second, false},
		{[]string{"--tasks", "off"}, true, time.Second, false},
		{[]string{"--tasks=auto", "--task-after", "250ms"}, false, 250 * time.Millisecond, false},
		{[]string{"--tasks", "sometimes"}, false, 0, true},
		{[]string{"--task-after", "0s"}, false, 0, true},
		{[]string{"--task-after", "-1s"}, false, 0, true},
		{[]string{"--task-after", "soon"}, false, 0, true},
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var f Tasks
		f.Register(fs)
		err := fs.Parse(c.args)
		if (err != nil) != c.bad {
			t.Errorf("%v: error %v", c.args, err)
			continue
		}
		if c.bad {
			continue
		}
		if o := f.Options(); o.Off != c.off || o.After != c.after || o.Budget == nil {
			t.Errorf("%v: options %+v, want off %v, after %s and a budget", c.args, o, c.off, c.after)
		}
	}
}
