package e2e

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDemoExit (issue 11, "the README's two commands still work"): the
// built binary's `demo --exit`, the README's first command, exits 0 after
// listing the notes app's five tools and calling some of them through its
// in-process MCP client, and says so on stderr.
func TestDemoExit(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "demo", "--exit", "--headless", "--state-dir", "")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("demo --exit: %v (want exit 0)\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	log := stderr.String()
	if !strings.Contains(log, "the notes app at http://127.0.0.1:") || !strings.Contains(log, "registered 5 tools") {
		t.Errorf("demo --exit did not report the notes app's five tools; stderr:\n%s", log)
	}
	for _, tool := range []string{"add_note", "list_notes", "search_notes", "delete_note", "get_stats"} {
		if !regexp.MustCompile(`(?m)^  \S+_` + tool + ` `).MatchString(log) {
			t.Errorf("demo --exit did not list %s; stderr:\n%s", tool, log)
		}
	}
	// The calls and what the page answered: two notes added, then listed
	// and counted.
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^call \S+_add_note \{.*"title":"Hello".*\}  \(.+\)\n  -> Added note #1: Hello$`),
		regexp.MustCompile(`(?m)^call \S+_add_note .*\n  -> Added note #2: Second note$`),
		regexp.MustCompile(`(?m)^call \S+_list_notes \{\}  \(.+\)\n  -> \[.*"title":"Hello".*"title":"Second note".*\]$`),
		regexp.MustCompile(`(?m)^call \S+_get_stats \{\}  \(.+\)\n  -> \{"count":2,"tags":\{"demo":2\}\}$`),
	} {
		if !want.MatchString(log) {
			t.Errorf("demo --exit stderr lacks %s:\n%s", want, log)
		}
	}
	if len(out) != 0 {
		t.Errorf("demo --exit wrote to stdout (the MCP channel): %q", out)
	}
	// Quiet by default (issue 29 point 4): the go-sdk's connection chatter
	// is logged at debug level, not between webmcp-cdp's own lines.
	if sdk := sdkChatter.FindString(log); sdk != "" {
		t.Errorf("demo --exit printed the SDK's %q at the default level; stderr:\n%s", sdk, log)
	}
}

// sdkChatter matches the go-sdk's informational log lines, which webmcp-cdp
// logs at debug level.
var sdkChatter = regexp.MustCompile(`(?m)^.*(server run (start|cancelled)|server connecting|server session (connected|disconnected|ended)|session initialized).*$`)
