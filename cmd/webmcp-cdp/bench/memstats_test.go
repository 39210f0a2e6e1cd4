package bench

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

func TestMemStatsRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteMemStats(&buf); err != nil {
		t.Fatal(err)
	}
	m, err := parseMemStats(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range memStatNames() {
		if _, ok := m[name]; !ok {
			t.Errorf("the figures lack %s", name)
		}
	}
	if m["/memory/classes/total:bytes"] == 0 || m["/sched/goroutines:goroutines"] == 0 {
		t.Errorf("total memory %d and goroutines %d, want both above 0", m["/memory/classes/total:bytes"], m["/sched/goroutines:goroutines"])
	}
	for _, want := range []string{"Go runtime holds", "heap objects", "goroutines", "GCs"} {
		if s := m.summary(); !strings.Contains(s, want) {
			t.Errorf("summary %q lacks %q", s, want)
		}
	}
}

func TestParseMemStatsRefusesBadLines(t *testing.T) {
	for _, in := range []string{"no-value\n", "/gc/heap/live:bytes many\n", "/gc/heap/live:bytes -1\n"} {
		if _, err := parseMemStats(strings.NewReader(in)); err == nil {
			t.Errorf("parseMemStats(%q) gave no error", in)
		}
	}
}

func TestParseRollup(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		rss, anon int64
		wantErr   bool
	}{
		{"rollup", "00400000-7ffd1000 ---p 00000000 00:00 0 [rollup]\nRss:  36104 kB\nPss:  27219 kB\nAnonymous:  18736 kB\nSwap: 0 kB\n", 36104 << 10, 18736 << 10, false},
		{"no Anonymous line", "Rss:  36104 kB\n", 0, 0, true},
		{"no Rss line", "Anonymous:  18736 kB\n", 0, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rss, anon, err := parseRollup([]byte(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tc.wantErr)
			}
			if rss != tc.rss || anon != tc.anon {
				t.Errorf("rss, anon = %d, %d; want %d, %d", rss, anon, tc.rss, tc.anon)
			}
		})
	}
}

func TestResidentOfThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/smaps_rollup"); err != nil {
		t.Skip("no /proc/self/smaps_rollup here")
	}
	rss, anon, err := residentOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if anon <= 0 || anon >= rss {
		t.Errorf("anonymous %d bytes of RSS %d, want some but not all", anon, rss)
	}
}

// TestGroupPSSAndLeaders: the PSS of this process's group counts this
// process, and a child started in a group of its own is a group leader
// here until it ends.
func TestGroupPSSAndLeaders(t *testing.T) {
	if _, err := os.Stat("/proc/self/smaps_rollup"); err != nil {
		t.Skip("no /proc/self/smaps_rollup here")
	}
	pss, n, err := groupPSS(syscall.Getpgrp())
	if err != nil {
		t.Fatal(err)
	}
	if pss <= 0 || n < 1 {
		t.Errorf("PSS %d bytes in %d processes, want some in at least this one", pss, n)
	}
	before, err := groupLeaders()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep here:", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid, err := newLeader(before)
	if err != nil {
		t.Fatal(err)
	}
	if pid != cmd.Process.Pid {
		t.Errorf("new leader %d, want the child %d", pid, cmd.Process.Pid)
	}
	if _, n, err := groupPSS(pid); err != nil || n != 1 {
		t.Errorf("the child's group: %d processes, %v; want 1", n, err)
	}
}
