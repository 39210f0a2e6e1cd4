package bench

import (
	"fmt"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Row is one line of the report: what was measured and the result.
type Row struct {
	What  string
	Value string
}

// Report is the result of a run.
type Report struct {
	Date    time.Time
	Machine string
	Browser string
	Rows    []Row
}

// Table renders the report as an aligned text table.
func (r *Report) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "webmcp-cdp bench, %s, %s, %s\n\n", r.Date.Format("2006-01-02"), r.Machine, r.Browser)
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "what\tresult")
	fmt.Fprintln(w, "----\t------")
	for _, row := range r.Rows {
		fmt.Fprintf(w, "%s\t%s\n", row.What, row.Value)
	}
	w.Flush()
	return b.String()
}

// Markdown renders the report as a Markdown table.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured on %s on %s, %s, with `webmcp-cdp bench`:\n\n", r.Date.Format("2006-01-02"), r.Machine, r.Browser)
	b.WriteString("| what | result |\n|---|---|\n")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "| %s | %s |\n", row.What, row.Value)
	}
	return b.String()
}

// Latencies holds the round-trip times of one kind of call.
type Latencies []time.Duration

// Percentile returns the p-th percentile (the nearest rank at or below it),
// or 0 when there are no samples.
func (l Latencies) Percentile(p int) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

// summary is the p50/p95/p99 cell of a latency row.
func (l Latencies) summary() string {
	return fmt.Sprintf("p50 %s ms, p95 %s ms, p99 %s ms", ms(l.Percentile(50)), ms(l.Percentile(95)), ms(l.Percentile(99)))
}

// ratios is the cell comparing two latency sets: how many times slower a is
// than b at p50 and at p95.
func ratios(a, b Latencies) string {
	return fmt.Sprintf("p50 %s, p95 %s", times(float64(a.Percentile(50)), float64(b.Percentile(50))),
		times(float64(a.Percentile(95)), float64(b.Percentile(95))))
}

// times renders a/b as "2.31×", or "n/a" when b is zero.
func times(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64) + "×"
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 3, 64)
}

// machine describes this machine for the report's heading.
func machine() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if m := regexp.MustCompile(`model name\s*:\s*(.+)`).FindSubmatch(b); m != nil {
			cpu = strings.TrimSpace(string(m[1]))
		}
	}
	return fmt.Sprintf("%d cores, %s, %s/%s", runtime.NumCPU(), cpu, runtime.GOOS, runtime.GOARCH)
}
