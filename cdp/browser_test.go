package cdp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// fakeBrowserEnv makes the test binary act as a browser (see
// TestFakeBrowserProcess).
const fakeBrowserEnv = "WEBMCP_CDP_FAKE_BROWSER"

// TestFakeBrowserProcess is not a test: run by a script that fakeBrowser
// writes, it stands in for Chromium on the pipe (fds 3 and 4). Its mode says
// how it behaves:
//
//	exit      print a line and exit with status 3 at once
//	serve     answer every command; exit when the pipe closes
//	silent    answer nothing; exit when the pipe closes
//	stubborn  answer every command; ignore the pipe closing and SIGTERM
//	hangs-once silent until $TMPDIR/fake-browser-serve exists, then serve
//	           (the test makes it when the second start begins)
func TestFakeBrowserProcess(t *testing.T) {
	mode := os.Getenv(fakeBrowserEnv)
	if mode == "" {
		t.Skip("the fake browser of the Launch tests")
	}
	if mode == "hangs-once" {
		mode = "silent"
		if _, err := os.Stat(filepath.Join(os.Getenv("TMPDIR"), "fake-browser-serve")); err == nil {
			mode = "serve"
		}
	}
	fmt.Fprintln(os.Stderr, "fake browser starting in mode", mode)
	if mode == "exit" {
		fmt.Fprintln(os.Stderr, "fake browser: Missing X server or $DISPLAY")
		os.Exit(3)
	}
	if mode == "stubborn" {
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	}
	in, out := os.NewFile(3, "commands"), os.NewFile(4, "answers")
	r := bufio.NewReader(in)
	for {
		b, err := r.ReadBytes(0)
		if err != nil {
			break
		}
		var m cdproto.Message
		if jsonv2.Unmarshal(b[:len(b)-1], &m) != nil || mode == "silent" {
			continue
		}
		fmt.Fprintf(out, `{"id":%d,"result":{"product":"FakeChrome/1.0","protocolVersion":"1.3"}}`+"\x00", m.ID)
	}
	if mode == "stubborn" {
		select {}
	}
	fmt.Fprintln(os.Stderr, "fake browser: the pipe closed, exiting")
	os.Exit(0)
}

// fakeBrowser writes an executable that starts the test binary as a fake
// browser in mode, and returns its path.
func fakeBrowser(t *testing.T, mode string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fake-chrome-"+mode)
	script := fmt.Sprintf("#!/bin/sh\nexec env %s=%s %q -test.run='^TestFakeBrowserProcess$'\n", fakeBrowserEnv, mode, self)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// openFDs lists this process's open file descriptors.
func openFDs(t *testing.T) map[string]string {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd here")
	}
	fds := map[string]string{}
	for _, e := range entries {
		// The descriptor ReadDir used is closed by now: skip it.
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil {
			fds[e.Name()] = target
		}
	}
	return fds
}

// leakedFDs returns the descriptors open now that were not open before.
func leakedFDs(t *testing.T, before map[string]string) []string {
	t.Helper()
	var leaked []string
	for fd, target := range openFDs(t) {
		if _, ok := before[fd]; !ok {
			leaked = append(leaked, fd+" -> "+target)
		}
	}
	return leaked
}

// profiles lists the temporary profiles in the temp dir.
func profiles(t *testing.T, tmp string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(tmp, "webmcp-cdp-profile-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// warmUp opens and closes a pipe and a child process so that descriptors the
// runtime keeps for good (the poller's) exist before a count.
func warmUp(t *testing.T) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	w.Close()
}

// startsHandler calls second when Launch logs its second start, before
// that start.
type startsHandler struct {
	slog.Handler
	starts *atomic.Int32
	second func()
}

func (h startsHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "starting the browser" && h.starts.Add(1) == 2 {
		h.second()
	}
	return h.Handler.Handle(ctx, r)
}

func (h startsHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h.Handler = h.Handler.WithAttrs(attrs)
	return h
}

func (h startsHandler) WithGroup(name string) slog.Handler {
	h.Handler = h.Handler.WithGroup(name)
	return h
}

// TestLaunchStartsAHungBrowserAgain: a browser that starts but never
// answers is killed and started once more; the second one serves.
//
// Which start serves is decided by an event, not a clock: the fake is silent
// until the test marks, at Launch's second start, that it may serve. (The
// fake deciding for itself at startup raced the 300 ms first wait: on a
// loaded machine the first start could be killed before it ran, and the
// second then took the silent part.)
func TestLaunchStartsAHungBrowserAgain(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var log strings.Builder
	var starts atomic.Int32
	serve := func() {
		if err := os.WriteFile(filepath.Join(tmp, "fake-browser-serve"), nil, 0o600); err != nil {
			t.Error(err)
		}
	}
	opts := LaunchOptions{Chrome: fakeBrowser(t, "hangs-once"), Headless: true,
		Logger:    slog.New(startsHandler{slog.NewTextHandler(&log, nil), &starts, serve}),
		firstWait: 300 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	p, err := Launch(ctx, opts)
	if err != nil {
		t.Fatalf("Launch: %v\n%s", err, log.String())
	}
	defer p.Close()
	if got := strings.Count(log.String(), "starting the browser"); got != 2 {
		t.Errorf("the browser was started %d times, want 2:\n%s", got, log.String())
	}
	if !strings.Contains(log.String(), "did not answer; starting it once more") {
		t.Errorf("the log does not say why it started the browser again:\n%s", log.String())
	}
	// The browser's output is all in once it exited.
	p.Close()
	closedWithin(t, p.Exited(), "Exited")
	if !strings.Contains(p.ExitReason(), "fake browser starting in mode serve") {
		t.Errorf("the process Launch gave is not the serving start: %q", p.ExitReason())
	}
}

func TestLaunchFailureCleansUp(t *testing.T) {
	badInterpreter := filepath.Join(t.TempDir(), "chrome-with-a-missing-interpreter")
	if err := os.WriteFile(badInterpreter, []byte("#!/nonexistent/interpreter\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		chrome  string
		timeout time.Duration
		want    []string // in the error
	}{
		{"the binary cannot start", badInterpreter, patience, []string{"starting", badInterpreter}},
		{"the browser exits at once", fakeBrowser(t, "exit"), patience, []string{"Missing X server", "status 3"}},
		{"the browser never answers", fakeBrowser(t, "silent"), 300 * time.Millisecond, []string{"deadline exceeded"}},
	} {
		for _, ownProfile := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/own profile %v", tc.name, ownProfile), func(t *testing.T) {
				tmp := t.TempDir()
				t.Setenv("TMPDIR", tmp)
				opts := LaunchOptions{Chrome: tc.chrome, Headless: true, Logger: discardLogger()}
				if ownProfile {
					opts.UserDataDir = filepath.Join(tmp, "mine")
					if err := os.Mkdir(opts.UserDataDir, 0o700); err != nil {
						t.Fatal(err)
					}
				}
				warmUp(t)
				before := openFDs(t)
				ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
				defer cancel()
				p, err := Launch(ctx, opts)
				if err == nil {
					p.Close()
					t.Fatal("Launch succeeded")
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				if leaked := leakedFDs(t, before); len(leaked) > 0 {
					t.Errorf("Launch left descriptors open: %v", leaked)
				}
				if left := profiles(t, tmp); len(left) > 0 {
					t.Errorf("Launch left its temporary profile: %v", left)
				}
				if ownProfile {
					if _, err := os.Stat(opts.UserDataDir); err != nil {
						t.Errorf("Launch removed the user's profile: %v", err)
					}
				}
			})
		}
	}
}

func TestLaunchAndClose(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	warmUp(t)
	before := openFDs(t)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	p, err := Launch(ctx, LaunchOptions{Chrome: fakeBrowser(t, "serve"), Headless: true, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if len(profiles(t, tmp)) != 1 {
		t.Errorf("profiles while running: %v", profiles(t, tmp))
	}
	v, err := Version(ctx, p.Conn())
	if err != nil || v.Product != "FakeChrome/1.0" {
		t.Errorf("Version = %+v, %v", v, err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	closedWithin(t, p.Exited(), "Exited")
	if !strings.Contains(p.ExitReason(), "fake browser starting") {
		t.Errorf("ExitReason %q lacks the browser's output", p.ExitReason())
	}
	if left := profiles(t, tmp); len(left) > 0 {
		t.Errorf("Close left the temporary profile: %v", left)
	}
	if leaked := leakedFDs(t, before); len(leaked) > 0 {
		t.Errorf("Launch and Close left descriptors open: %v", leaked)
	}
	if err := p.Close(); err != nil {
		t.Errorf("a second Close = %v", err)
	}
}

// TestCloseReportsWhatIsLeft: Close says so when the browser would not die
// or the profile could not be removed.
func TestCloseReportsWhatIsLeft(t *testing.T) {
	t.Run("the browser does not exit", func(t *testing.T) {
		t.Setenv("TMPDIR", t.TempDir())
		p, err := Launch(t.Context(), LaunchOptions{Chrome: fakeBrowser(t, "stubborn"), Headless: true, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		defer killGroup(p.cmd)
		p.grace, p.killWait = 10*time.Millisecond, 10*time.Millisecond
		p.kill = func() {} // a kill that has no effect
		err = p.Close()
		if err == nil || !strings.Contains(err.Error(), "still running") || !strings.Contains(err.Error(), fmt.Sprint(p.cmd.Process.Pid)) {
			t.Errorf("Close = %v, want an error that the browser (pid %d) is still running", err, p.cmd.Process.Pid)
		}
	})
	t.Run("the profile cannot be removed", func(t *testing.T) {
		t.Setenv("TMPDIR", t.TempDir())
		p, err := Launch(t.Context(), LaunchOptions{Chrome: fakeBrowser(t, "serve"), Headless: true, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		denied := errors.New("permission denied")
		p.removeAll = func(string) error { return denied }
		err = p.Close()
		if !errors.Is(err, denied) || !strings.Contains(err.Error(), p.tempDir) {
			t.Errorf("Close = %v, want an error that wraps %v and names %s", err, denied, p.tempDir)
		}
		os.RemoveAll(p.tempDir)
	})
}

// reentrantHandler is a log handler that calls back into the Process whose
// output it logs.
type reentrantHandler struct {
	p     atomic.Pointer[Process]
	lines atomic.Int64
}

func (h *reentrantHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *reentrantHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *reentrantHandler) WithGroup(string) slog.Handler            { return h }
func (h *reentrantHandler) Handle(_ context.Context, r slog.Record) error {
	if p := h.p.Load(); p != nil && r.Message == "browser" {
		_ = p.ExitReason()
		h.lines.Add(1)
	}
	return nil
}

// TestOutputLoggedWithoutLock: the browser's output is logged without the
// Process's lock held, so a log handler may call back into the Process.
func TestOutputLoggedWithoutLock(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	h := &reentrantHandler{}
	p, err := Launch(t.Context(), LaunchOptions{Chrome: fakeBrowser(t, "serve"), Headless: true, Logger: slog.New(h)})
	if err != nil {
		t.Fatal(err)
	}
	h.p.Store(p)
	type closed struct {
		err    error
		reason string
	}
	done := make(chan closed, 1)
	go func() {
		err := p.Close()
		done <- closed{err, p.ExitReason()}
	}()
	r := recv(t, done, "the end of Close (a deadlock?)")
	if r.err != nil {
		t.Errorf("Close = %v", r.err)
	}
	if !strings.Contains(r.reason, "the pipe closed") || h.lines.Load() == 0 {
		t.Errorf("the last line was not logged: %d lines, ExitReason %q", h.lines.Load(), r.reason)
	}
}

// TestMergeFeatures: our features and the user's end up in one
// --enable-features and one --disable-features (Chromium reads only the
// last of each), and a feature the user enables is not disabled.
func TestMergeFeatures(t *testing.T) {
	for _, tc := range []struct {
		name            string
		args            []string
		enable, disable []string
		want            []string
	}{
		{"ours only", []string{"--a"}, nil, []string{"IsolateSandboxedIframes"},
			[]string{"--a", "--disable-features=IsolateSandboxedIframes"}},
		{"native", nil, []string{"WebMCP"}, []string{"IsolateSandboxedIframes"},
			[]string{"--enable-features=WebMCP", "--disable-features=IsolateSandboxedIframes"}},
		{"the user's joined, no repeats", []string{"--enable-features=WebMCP,Foo", "--b", "--disable-features=Bar,"}, []string{"WebMCP"}, []string{"IsolateSandboxedIframes"},
			[]string{"--b", "--enable-features=WebMCP,Foo", "--disable-features=IsolateSandboxedIframes,Bar"}},
		{"the user enables what we would disable", []string{"--enable-features=IsolateSandboxedIframes"}, nil, []string{"IsolateSandboxedIframes"},
			[]string{"--enable-features=IsolateSandboxedIframes"}},
		{"the user enables it with parameters", []string{"--enable-features=IsolateSandboxedIframes:grouping/per-origin"}, nil, []string{"IsolateSandboxedIframes"},
			[]string{"--enable-features=IsolateSandboxedIframes:grouping/per-origin"}},
		{"the user disables what we would enable", []string{"--disable-features=WebMCP"}, []string{"WebMCP"}, []string{"IsolateSandboxedIframes"},
			[]string{"--disable-features=IsolateSandboxedIframes,WebMCP"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mergeFeatures(tc.args, tc.enable, tc.disable); !slices.Equal(got, tc.want) {
				t.Errorf("mergeFeatures = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRemoteArgs(t *testing.T) {
	got := RemoteArgs(LaunchOptions{Headless: true, Args: []string{"--lang=de", "--enable-features=X"}, WindowWidth: 800, WindowHeight: 600})
	for _, want := range []string{"--headless", "--disable-popup-blocking", "--lang=de", "--window-size=800,600", "--enable-features=X", "--disable-features=IsolateSandboxedIframes"} {
		if !slices.Contains(got, want) {
			t.Errorf("RemoteArgs lacks %s: %q", want, got)
		}
	}
	for _, a := range got {
		if a == "--remote-debugging-pipe" || strings.HasPrefix(a, "--user-data-dir") || a == "about:blank" || a == "--no-sandbox" {
			t.Errorf("RemoteArgs has %s, which the Grid's node decides: %q", a, got)
		}
	}
	if slices.Contains(RemoteArgs(LaunchOptions{}), "--headless") {
		t.Error("RemoteArgs has --headless without Headless: the node's display decides")
	}
}
