package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestPairedAlternatesWhoGoesFirst(t *testing.T) {
	var order []string
	rec := func(name string) func(context.Context) error {
		return func(context.Context) error { order = append(order, name); return nil }
	}
	la, lb, err := Paired(t.Context(), 4, rec("a"), rec("b"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "b", "a", "a", "b", "b", "a"}; !slices.Equal(order, want) {
		t.Errorf("call order %v, want %v", order, want)
	}
	if len(la) != 4 || len(lb) != 4 {
		t.Errorf("got %d and %d latencies, want 4 each", len(la), len(lb))
	}
}

func TestInterleavedRotatesWhoGoesFirst(t *testing.T) {
	var order []string
	rec := func(name string) func(context.Context) error {
		return func(context.Context) error { order = append(order, name); return nil }
	}
	ls, err := Interleaved(t.Context(), 3, rec("a"), rec("b"), rec("c"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "c", "b", "c", "a", "c", "a", "b"}; !slices.Equal(order, want) {
		t.Errorf("call order %v, want %v", order, want)
	}
	if len(ls) != 3 || len(ls[0]) != 3 || len(ls[1]) != 3 || len(ls[2]) != 3 {
		t.Errorf("got latencies %v, want 3 of each of 3", ls)
	}
	boom := errors.New("boom")
	if _, err := Interleaved(t.Context(), 3, rec("a"), func(context.Context) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
}

func TestPairedStopsAtTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	fail := func(context.Context) error { calls++; return boom }
	if _, _, err := Paired(t.Context(), 10, func(context.Context) error { return nil }, fail); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if calls != 1 {
		t.Errorf("the failing side ran %d times, want 1", calls)
	}
}

func TestThroughputAlternatesRoundsAndCountsBothSides(t *testing.T) {
	var mu sync.Mutex
	var rounds []string
	last := ""
	rec := func(name string) func(context.Context) error {
		return func(context.Context) error {
			mu.Lock()
			if name != last {
				rounds = append(rounds, name)
				last = name
			}
			mu.Unlock()
			time.Sleep(time.Millisecond) // the measured operation's own time, not a wait
			return nil
		}
	}
	a, b, err := Throughput(t.Context(), 2, 20*time.Millisecond, 2, rec("a"), rec("b"))
	if err != nil {
		t.Fatal(err)
	}
	// a b, then b a: the two b rounds run back to back.
	if want := []string{"a", "b", "a"}; !slices.Equal(rounds, want) {
		t.Errorf("rounds %v, want %v", rounds, want)
	}
	if a <= 0 || b <= 0 {
		t.Errorf("calls/s a=%v b=%v, want both above 0", a, b)
	}
}

func TestThroughputReportsACallerError(t *testing.T) {
	boom := errors.New("boom")
	_, _, err := Throughput(t.Context(), 3, 10*time.Millisecond, 1,
		func(context.Context) error { return nil }, func(context.Context) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
}

func TestPercentileAndRatios(t *testing.T) {
	var l Latencies
	for i := 100; i >= 1; i-- {
		l = append(l, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[int]time.Duration{50: 50 * time.Millisecond, 95: 95 * time.Millisecond, 99: 99 * time.Millisecond, 100: 100 * time.Millisecond} {
		if got := l.Percentile(p); got != want {
			t.Errorf("p%d = %v, want %v", p, got, want)
		}
	}
	if l[0] != 100*time.Millisecond {
		t.Error("Percentile sorted the caller's slice")
	}
	if got := Latencies(nil).Percentile(50); got != 0 {
		t.Errorf("p50 of nothing = %v, want 0", got)
	}
	double := make(Latencies, len(l))
	for i, d := range l {
		double[i] = 2 * d
	}
	if got, want := ratios(double, l), "p50 2.00×, p95 2.00×"; got != want {
		t.Errorf("ratios = %q, want %q", got, want)
	}
	if got := times(1, 0); got != "n/a" {
		t.Errorf("times(1, 0) = %q, want n/a", got)
	}
}

func TestReportRendersEveryRow(t *testing.T) {
	rep := &Report{Date: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC), Machine: "m", Browser: "b",
		Rows: []Row{{"one", "1"}, {"two", "2"}}}
	table, md := rep.Table(), rep.Markdown()
	for _, want := range []string{"2026-11-24", "one   1", "two   2"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	for _, want := range []string{"| what | result |", "| one | 1 |", "| two | 2 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestRSSOfThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc here")
	}
	rss, err := rssOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss < 1<<20 {
		t.Errorf("RSS %d bytes, want at least 1 MB", rss)
	}
}

func TestRowSelection(t *testing.T) {
	tests := []struct {
		name    string
		rows    []string
		want    map[string]bool
		wantErr bool
	}{
		{"all when empty", nil, map[string]bool{"startup": true, "attach": true}, false},
		{"one group", []string{"attach"}, map[string]bool{"startup": false, "stdio": false, "attach": true}, false},
		{"two groups", []string{"stdio", "http"}, map[string]bool{"stdio": true, "http": true, "attach": false}, false},
		{"unknown group", []string{"attach", "nope"}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Rows: tc.rows}
			err := o.checkRows()
			if (err != nil) != tc.wantErr {
				t.Fatalf("checkRows(%v) = %v, want error %v", tc.rows, err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "startup, stdio") {
				t.Errorf("checkRows error %q does not list the groups", err)
			}
			for g, want := range tc.want {
				if got := o.selected(g); got != want {
					t.Errorf("selected(%q) with rows %v = %v, want %v", g, tc.rows, got, want)
				}
			}
		})
	}
}

func TestProfileEnv(t *testing.T) {
	tests := []struct {
		name, path string
		want       int // variables returned
	}{
		{"no profile", "", 0},
		{"relative path", "heap.pprof", 1},
		{"absolute path", filepath.Join(os.TempDir(), "heap.pprof"), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, err := profileEnv("--memprofile", MemProfileEnv, tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if len(env) != tc.want {
				t.Fatalf("env = %q, want %d variables", env, tc.want)
			}
			if tc.want == 0 {
				return
			}
			val, ok := strings.CutPrefix(env[0], MemProfileEnv+"=")
			if !ok || !filepath.IsAbs(val) || !strings.HasSuffix(val, "heap.pprof") {
				t.Errorf("env = %q, want %s=<absolute path to heap.pprof>", env[0], MemProfileEnv)
			}
		})
	}
}

func TestLineID(t *testing.T) {
	for _, tc := range []struct {
		line string
		id   int64
		ok   bool
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{}}` + "\n", 7, true},
		{`{"jsonrpc":"2.0","id":123456789,"method":"tools/call","params":{}}`, 123456789, true},
		{`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, 0, false},
		{`{"jsonrpc":"2.0","id":"s1","result":{}}`, 0, false},
		{`{"id":7,"jsonrpc":"2.0"}`, 0, false},
		{`{"jsonrpc":"2.0","id":7}`, 0, false},
	} {
		id, ok := lineID([]byte(tc.line))
		if id != tc.id || ok != tc.ok {
			t.Errorf("lineID(%s) = %d, %v; want %d, %v", tc.line, id, ok, tc.id, tc.ok)
		}
	}
}

// TestFindTool: a tool is found by its suffix once the list holds enough
// page tools; the server's own tools do not count.
func TestFindTool(t *testing.T) {
	tools := func(names ...string) []*mcp.Tool {
		out := make([]*mcp.Tool, len(names))
		for i, n := range names {
			out[i] = &mcp.Tool{Name: n}
		}
		return out
	}
	list := tools("webmcp_list_tabs", "127_0_0_1_echo_0", "127_0_0_1_navigate")
	if got := findTool(list, "echo_0", 2); got != "127_0_0_1_echo_0" {
		t.Errorf("findTool = %q, want the echo tool", got)
	}
	if got := findTool(list, "echo_0", 3); got != "" {
		t.Errorf("findTool with too few page tools = %q, want none", got)
	}
	if got := findTool(list, "echo_1", 1); got != "" {
		t.Errorf("findTool of a missing tool = %q, want none", got)
	}
}

// TestInTurn: even rounds run a first, odd rounds b, and an error stops
// the round.
func TestInTurn(t *testing.T) {
	var order []string
	rec := func(name string, err error) func() error {
		return func() error { order = append(order, name); return err }
	}
	for i := range 2 {
		if err := inTurn(i, rec("a", nil), rec("b", nil)); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(order, ""); got != "abba" {
		t.Errorf("order %q, want abba", got)
	}
	order = nil
	boom := errors.New("boom")
	if err := inTurn(0, rec("a", boom), rec("b", nil)); !errors.Is(err, boom) || len(order) != 1 {
		t.Errorf("err %v after %v, want boom after a alone", err, order)
	}
}
