package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFirstContactCLI (issue 11, points 3, 4 and 6): configuration from the
// environment and a file, with errors that name their source; start URLs
// without a scheme; JSON argument errors with their position; a browser
// that cannot be found; each failure in one line on stderr.
func TestFirstContactCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unknown := write("unknown.yaml", "call-timeout: 5s\ncall-timout: 6s\n")
	badValue := write("bad.json", `{"max-tools-per-document": "lots"}`)
	tests := []struct {
		name       string
		env        []string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "help tells the other sources", args: []string{"launch", "--help"}, wantStdout: "WEBMCP_CDP_<FLAG>"},
		{name: "bad env value", env: []string{"WEBMCP_CDP_CALL_TIMEOUT=3x"}, args: []string{"launch"}, wantCode: 2, wantStderr: `WEBMCP_CDP_CALL_TIMEOUT: invalid duration "3x" (try 30s)`},
		{name: "the flag wins over a bad env value", env: []string{"WEBMCP_CDP_CALL_TIMEOUT=3x"}, args: []string{"launch", "--call-timeout", "-1s"}, wantCode: 1, wantStderr: "--call-timeout -1s: must be positive"},
		{name: "env reaches the command's own checks", env: []string{"WEBMCP_CDP_BACKEND=magic"}, args: []string{"launch"}, wantCode: 1, wantStderr: `unknown backend "magic"`},
		{name: "unknown config key", args: []string{"launch", "--config", unknown}, wantCode: 2, wantStderr: unknown + `: unknown key "call-timout"`},
		{name: "bad config value", args: []string{"launch", "--config", badValue}, wantCode: 2, wantStderr: badValue + `: max-tools-per-document: invalid number "lots" (try 200)`},
		{name: "config file from env", env: []string{"WEBMCP_CDP_CONFIG=" + unknown}, args: []string{"launch"}, wantCode: 2, wantStderr: `unknown key "call-timout"`},
		{name: "scheme-less remote URL", args: []string{"launch", "--headless", "example.com/app"}, wantCode: 2, wantStderr: `"example.com/app" has no scheme: add https:// (or http://)`},
		{name: "JSON arguments with position", args: []string{"call", "http://127.0.0.1:1/", "add", "{\"a\": 1,\n \"b\": }"}, wantCode: 2, wantStderr: "line 2, column 7: invalid character '}'"},
		// A value the flag refuses as it parses is a usage error, as on every command.
		{name: "bad channel", args: []string{"launch", "--channel", "nightly"}, wantCode: 2, wantStderr: `invalid channel "nightly"`},
		{name: "no browser of a channel", env: []string{"PATH=/nonexistent", "CHROME_PATH="}, args: []string{"launch", "--channel", "canary"}, wantCode: 1, wantStderr: "/opt/google/chrome-canary/chrome"},
		{name: "missing browser, one line", args: []string{"launch", "--chrome", "/nonexistent/chromium"}, wantCode: 1, wantStderr: "/nonexistent/chromium"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(binary, tt.args...)
			cmd.Env = append(os.Environ(), tt.env...)
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
				t.Errorf("stdout lacks %q: %.300s", tt.wantStdout, stdout.String())
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr lacks %q: %s", tt.wantStderr, stderr.String())
			}
			if tt.name == "missing browser, one line" && strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("a failure to start printed more than one line:\n%s", stderr.String())
			}
		})
	}
}
