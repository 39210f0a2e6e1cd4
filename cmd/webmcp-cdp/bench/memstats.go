package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/metrics"
	"strconv"
	"strings"
)

// MemStatsEnv is the environment variable that makes a webmcp-cdp process
// write the Go runtime's memory figures (WriteMemStats) to the file it names
// when it is asked to stop (or ends), before it tears anything down. Unlike
// MemProfileEnv it changes nothing in how the process allocates.
const MemStatsEnv = "WEBMCP_CDP_MEMSTATS"

// memStatNames are the runtime/metrics that WriteMemStats writes: where the
// memory the runtime holds goes, the heap's goal, the goroutines and the
// garbage collections.
func memStatNames() []string {
	return []string{
		"/memory/classes/total:bytes",
		"/memory/classes/heap/objects:bytes",
		"/memory/classes/heap/unused:bytes",
		"/memory/classes/heap/free:bytes",
		"/memory/classes/heap/released:bytes",
		"/memory/classes/heap/stacks:bytes",
		"/memory/classes/os-stacks:bytes",
		"/memory/classes/metadata/mspan/inuse:bytes",
		"/memory/classes/metadata/mspan/free:bytes",
		"/memory/classes/metadata/mcache/inuse:bytes",
		"/memory/classes/metadata/mcache/free:bytes",
		"/memory/classes/metadata/other:bytes",
		"/memory/classes/profiling/buckets:bytes",
		"/memory/classes/other:bytes",
		"/gc/heap/live:bytes",
		"/gc/heap/goal:bytes",
		"/gc/heap/allocs:bytes",
		"/gc/cycles/total:gc-cycles",
		"/gc/stack/starting-size:bytes",
		"/sched/goroutines:goroutines",
		"/sched/threads/total:threads",
	}
}

// WriteMemStats writes the runtime/metrics of memStatNames to w, one
// "name value" line each.
func WriteMemStats(w io.Writer) error {
	names := memStatNames()
	samples := make([]metrics.Sample, len(names))
	for i, n := range names {
		samples[i].Name = n
	}
	metrics.Read(samples)
	var b strings.Builder
	for _, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			fmt.Fprintf(&b, "%s %d\n", s.Name, s.Value.Uint64())
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing the memory figures: %w", err)
	}
	return nil
}

// memStats are the figures WriteMemStats wrote, by metric name.
type memStats map[string]uint64

// parseMemStats reads what WriteMemStats wrote.
func parseMemStats(r io.Reader) (memStats, error) {
	m := memStats{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			return nil, fmt.Errorf("memory figures: line %q is not \"name value\"", sc.Text())
		}
		v, err := strconv.ParseUint(val, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("memory figures: %s: %w", name, err)
		}
		m[name] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the memory figures: %w", err)
	}
	return m, nil
}

// summary renders the figures in MB for a report row: the heap's objects,
// its goal and what the runtime holds beside them.
func (m memStats) summary() string {
	mb := func(name string) string {
		return fmt.Sprintf("%.1f", float64(m["/memory/classes/"+name+":bytes"])/(1<<20))
	}
	meta := m["/memory/classes/metadata/mspan/inuse:bytes"] + m["/memory/classes/metadata/mspan/free:bytes"] +
		m["/memory/classes/metadata/mcache/inuse:bytes"] + m["/memory/classes/metadata/mcache/free:bytes"] +
		m["/memory/classes/metadata/other:bytes"]
	return fmt.Sprintf("Go runtime holds %s MB, released %s MB of it: heap objects %s (live %.1f, goal %.1f), unused in spans %s, free spans %s; stacks %s (%d goroutines, %d threads); metadata %.1f; other %s; profiling %s; %d GCs",
		mb("total"), mb("heap/released"), mb("heap/objects"),
		float64(m["/gc/heap/live:bytes"])/(1<<20), float64(m["/gc/heap/goal:bytes"])/(1<<20),
		mb("heap/unused"), mb("heap/free"), mb("heap/stacks"),
		m["/sched/goroutines:goroutines"], m["/sched/threads/total:threads"],
		float64(meta)/(1<<20), mb("other"), mb("profiling/buckets"), m["/gc/cycles/total:gc-cycles"])
}

// readMemStats reads the figures from the file at path.
func readMemStats(path string) (memStats, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening the memory figures the server wrote: %w", err)
	}
	defer f.Close()
	return parseMemStats(f)
}

// residentOf reads how much of a process's resident set is anonymous
// memory (the heap, stacks, the runtime's own) and how much is pages of
// files (the binary, shared libraries), from /proc/PID/smaps_rollup.
func residentOf(pid int) (rss, anon int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("reading the memory of process %d: %w", pid, err)
	}
	return parseRollup(b)
}

// parseRollup reads the Rss and Anonymous lines of a smaps_rollup, in bytes.
func parseRollup(b []byte) (rss, anon int64, err error) {
	if rss, err = kBField(b, "Rss"); err != nil {
		return 0, 0, fmt.Errorf("smaps_rollup: %w", err)
	}
	if anon, err = kBField(b, "Anonymous"); err != nil {
		return 0, 0, fmt.Errorf("smaps_rollup: %w", err)
	}
	return rss, anon, nil
}

// kBField reads the line "name: N kB" of a file of /proc (status,
// smaps_rollup), in bytes.
func kBField(b []byte, name string) (int64, error) {
	m := regexp.MustCompile(`(?m)^` + name + `:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		return 0, fmt.Errorf("no %s line", name)
	}
	kb, err := strconv.ParseInt(string(m[1]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return kb << 10, nil
}

// proc is a process as /proc/PID/stat has it: its parent and its process
// group.
type proc struct{ pid, ppid, pgrp int }

// processes lists the processes of the machine from /proc (those that end
// meanwhile are left out).
func processes() ([]proc, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, fmt.Errorf("listing the processes: %w", err)
	}
	out := make([]proc, 0, len(stats))
	for _, stat := range stats {
		b, err := os.ReadFile(stat)
		if err != nil {
			continue // it ended
		}
		// pid (comm) state ppid pgrp …: comm may hold spaces and parentheses.
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(stat)))
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 3 {
			continue
		}
		ppid, err1 := strconv.Atoi(f[1])
		pgrp, err2 := strconv.Atoi(f[2])
		if err1 == nil && err2 == nil {
			out = append(out, proc{pid, ppid, pgrp})
		}
	}
	return out, nil
}

// groupLeaders returns the children of this process that lead a process
// group of their own: the browsers it launched (cdp.Launch gives each a
// group of its own).
func groupLeaders() (map[int]bool, error) {
	ps, err := processes()
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	out := map[int]bool{}
	for _, p := range ps {
		if p.ppid == self && p.pgrp == p.pid {
			out[p.pid] = true
		}
	}
	return out, nil
}

// groupPSS sums the proportional set size (shared pages split among the
// processes that map them) of the processes of process group pgid: a
// launched browser and its helpers. It returns the sum in bytes and how
// many processes it found.
func groupPSS(pgid int) (int64, int, error) {
	ps, err := processes()
	if err != nil {
		return 0, 0, err
	}
	var sum int64
	n := 0
	for _, p := range ps {
		if p.pgrp != pgid {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", p.pid))
		if err != nil {
			continue // it ended
		}
		pss, err := kBField(b, "Pss")
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/%d/smaps_rollup: %w", p.pid, err)
		}
		sum += pss
		n++
	}
	if n == 0 {
		return 0, 0, fmt.Errorf("no process of group %d in /proc", pgid)
	}
	return sum, n, nil
}
