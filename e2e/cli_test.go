package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCLI: the small commands and the clear errors of bad flags.
func TestCLI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "version", args: []string{"version"}, wantStdout: "webmcp-cdp "},
		{name: "--version flag", args: []string{"--version"}, wantStdout: "webmcp-cdp version "},
		{name: "polyfill", args: []string{"polyfill"}, wantStdout: "document.modelContext"},
		{name: "bad backend", args: []string{"launch", "--backend", "magic"}, wantCode: 1, wantStderr: `--backend: unknown backend "magic": use auto, polyfill or native`},
		{name: "bad log level", args: []string{"version", "--log-level", "loud"}, wantCode: 1, wantStderr: `--log-level "loud"`},
		{name: "attach needs an address", args: []string{"attach"}, wantCode: 1, wantStderr: "browser-url"},
		{name: "attach to nothing", args: []string{"attach", "--browser-url", "http://127.0.0.1:1"}, wantCode: 1, wantStderr: "is Chrome running with --remote-debugging-port?"},
		{name: "attach to a bad URL", args: []string{"attach", "--browser-url", "localhost:9222"}, wantCode: 1, wantStderr: "is not an http:// URL"},
		{name: "missing browser", args: []string{"launch", "--chrome", "/nonexistent/chromium"}, wantCode: 1, wantStderr: "/nonexistent/chromium"},
		{name: "missing browser, --relaunch", args: []string{"launch", "--relaunch", "--chrome", "/nonexistent/chromium"}, wantCode: 1, wantStderr: "/nonexistent/chromium"},
		{name: "--browser without a name", args: []string{"attach", "--browser", "http://127.0.0.1:1/?token=T0KEN"}, wantCode: 2, wantStderr: "give NAME=URL"},
		{name: "bad timeout", args: []string{"launch", "--call-timeout", "-1s"}, wantCode: 1, wantStderr: "--call-timeout -1s: must be positive"},
		{name: "a flag of other commands", args: []string{"version", "--confirm", "writes"}, wantCode: 2, wantStderr: "--confirm is a flag of attach, demo and launch; version does not use it"},
		{name: "an unknown flag", args: []string{"launch", "--nope"}, wantCode: 2, wantStderr: "unknown flag: --nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(binary, tt.args...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d; stderr: %s", code, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout lacks %q: %.200s", tt.wantStdout, stdout.String())
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr lacks %q: %s", tt.wantStderr, stderr.String())
			}
		})
	}
}

// TestVersionWithBrowser prints the browser's version too.
func TestVersionWithBrowser(t *testing.T) {
	t.Parallel()
	browserURL := startChrome(t, "about:blank")
	out, err := exec.Command(binary, "version", "--browser-url", browserURL).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "browser Chrome/") {
		t.Errorf("version output %q lacks the browser's version", out)
	}
}

// TestNativeBackendMissing: --backend native on a browser without WebMCP
// fails clearly instead of serving nothing.
func TestNativeBackendMissing(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	cmd := exec.Command(binary, "launch", "--headless", "--backend", "native", "--chrome-arg=--disable-features=WebMCP", base+"/current/")
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code := waitExit(t, cmd)
	if code == 0 || !strings.Contains(stderr.String(), "has no native document.modelContext") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr.String())
	}
}
