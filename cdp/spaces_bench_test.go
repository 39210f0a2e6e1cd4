package cdp

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// What a browser space costs on a real Chromium, beside a tab of the
// browser's default context:
//
//	go test -run '^$' -bench 'FirstPage|SpaceMemory' -benchtime=5x ./cdp/
//
// (the numbers of 2026-12-03 are in docs/decisions/2026-12-03-space-browser-context.md).

// BenchmarkFirstPage: from nothing to a small page loaded and its tools
// read, in a new context and, for reference, in a new tab of the default
// context followed by a Browser that is there already. A tab of the
// default context stays open throughout: the first tab of a browser starts
// its shared processes (GPU, network, storage), which neither pays for.
// ms-context is Target.createBrowserContext alone; ms-started adds the new
// connection before it and the Browser's Start after it; ms-loaded is the
// tab's OpenLoaded until the load event.
func BenchmarkFirstPage(b *testing.B) {
	_, ws := launchShared(b)
	base := servePages(b)
	def := follow(b, ws, "default", false)
	def.openLoaded(b, base+"/")
	b.Run("default context tab", func(b *testing.B) {
		for b.Loop() {
			tab := def.openLoaded(b, base+"/")
			def.sink.toolDoc(b, tab, "recall")
			b.StopTimer()
			if err := def.b.CloseTab(context.Background(), tab); err != nil {
				b.Fatal(err)
			}
			def.sink.wait(b, "the tab closed", func() bool { _, open := def.sink.tabs[tab]; return !open })
			b.StartTimer()
		}
	})
	b.Run("new context", func(b *testing.B) {
		var made, started, loaded time.Duration
		for b.Loop() {
			start := time.Now()
			sp := openSpace(b, ws, "bench")
			started += time.Since(start)
			made += sp.made
			t0 := time.Now()
			tab := sp.openLoaded(b, base+"/")
			loaded += time.Since(t0)
			sp.sink.toolDoc(b, tab, "recall")
			b.StopTimer()
			sp.conn.Close() // the context goes with it
			b.StartTimer()
		}
		n := float64(b.N)
		b.ReportMetric(float64(made.Microseconds())/n/1000, "ms-context")
		b.ReportMetric(float64(started.Microseconds())/n/1000, "ms-started")
		b.ReportMetric(float64(loaded.Microseconds())/n/1000, "ms-loaded")
	})
}

// BenchmarkSpaceMemory: what the browser's processes take (the sums of
// their RSS and PSS) for each space with one tab of a small page, and for
// each further tab of it in the default context. Run it with a small
// -benchtime=Nx: every space stays until the end.
func BenchmarkSpaceMemory(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc")
	}
	b.Run("default context tab", func(b *testing.B) {
		p, ws := launchShared(b)
		base := servePages(b)
		sp := follow(b, ws, "default", false)
		measureTabs(b, p, func() {
			tab := sp.openLoaded(b, base+"/")
			sp.sink.toolDoc(b, tab, "recall")
		})
	})
	b.Run("new context", func(b *testing.B) {
		p, ws := launchShared(b)
		base := servePages(b)
		measureTabs(b, p, func() {
			sp := openSpace(b, ws, "bench")
			tab := sp.openLoaded(b, base+"/")
			sp.sink.toolDoc(b, tab, "recall")
		})
	})
}

// measureTabs runs add once (the first tab starts the browser's shared
// processes: GPU, network, storage), then b.N times, and reports the
// browser's memory growth per run after the first.
func measureTabs(b *testing.B, p *Process, add func()) {
	add()
	rss0, pss0 := groupMemory(b, p.cmd.Process.Pid)
	for b.Loop() {
		add()
	}
	rss, pss := groupMemory(b, p.cmd.Process.Pid)
	n := float64(b.N)
	b.ReportMetric(float64(rss-rss0)/1024/n, "MB-RSS/op")
	b.ReportMetric(float64(pss-pss0)/1024/n, "MB-PSS/op")
	b.ReportMetric(float64(pss)/1024, "MB-PSS-total")
}

// groupMemory sums the RSS and PSS, in KiB, of the processes of the
// process group pgid (a launched browser and its helpers: Launch gives
// the browser a group of its own).
func groupMemory(tb testing.TB, pgid int) (rss, pss int64) {
	tb.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		tb.Fatal(err)
	}
	for _, stat := range stats {
		b, err := os.ReadFile(stat)
		if err != nil {
			continue // it ended
		}
		// pid (comm) state ppid pgrp …: comm may hold spaces and parentheses.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		roll, err := os.ReadFile(filepath.Join(filepath.Dir(stat), "smaps_rollup"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(roll))
		for sc.Scan() {
			var kb int64
			if _, err := fmt.Sscanf(sc.Text(), "Rss: %d kB", &kb); err == nil {
				rss += kb
			} else if _, err := fmt.Sscanf(sc.Text(), "Pss: %d kB", &kb); err == nil {
				pss += kb
			}
		}
	}
	if rss == 0 {
		tb.Fatalf("found no process of group %d in /proc", pgid)
	}
	return rss, pss
}
