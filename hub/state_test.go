package hub

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func entriesNamed(names ...string) []cacheEntry {
	var out []cacheEntry
	for _, n := range names {
		out = append(out, cacheEntry{Origin: "https://example.com", URL: "https://example.com/", Tool: savedTool{Name: n, Description: "d"}, Seen: time.Now()})
	}
	return out
}

func loadNames(t *testing.T, dir string) []string {
	t.Helper()
	s := &stateStore{dir: dir, logger: slog.New(slog.DiscardHandler)}
	var out []string
	for _, e := range s.load(time.Hour, time.Now()) {
		out = append(out, e.Tool.Name)
	}
	return out
}

// TestStateCrashBetweenWriteAndRename kills a process after it wrote the new
// state to its temporary file and before the rename: the old state must
// still be whole, and the next start must clean up.
func TestStateCrashBetweenWriteAndRename(t *testing.T) {
	if dir := os.Getenv("WEBMCP_CDP_STATE_CRASH_DIR"); dir != "" {
		// The child: write once, then crash in the middle of a second write.
		s := &stateStore{dir: dir, logger: slog.New(slog.DiscardHandler)}
		if err := s.save(entriesNamed("old")); err != nil {
			t.Fatal(err)
		}
		s.beforeRename = func() { os.Exit(3) }
		s.save(entriesNamed("new", "newer"))
		t.Fatal("the crash hook did not run")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStateCrashBetweenWriteAndRename$")
	cmd.Env = append(os.Environ(), "WEBMCP_CDP_STATE_CRASH_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Fatalf("the child did not crash where planned: %v\n%s", err, out)
	}
	temps, _ := filepath.Glob(filepath.Join(dir, "."+StateFile+".*.tmp"))
	if len(temps) != 1 {
		t.Fatalf("want the crashed write's temporary file, found %q", temps)
	}
	if got := loadNames(t, dir); strings.Join(got, ",") != "old" {
		t.Errorf("after the crash the state holds %q, want the old state", got)
	}
	// A later start removes temporary files older than a minute.
	old := time.Now().Add(-2 * time.Minute)
	if err := os.Chtimes(temps[0], old, old); err != nil {
		t.Fatal(err)
	}
	loadNames(t, dir)
	if _, err := os.Stat(temps[0]); !os.IsNotExist(err) {
		t.Errorf("the stale temporary file is still there: %v", err)
	}
}

func TestStateSaveReplacesWhole(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "state")
	s := &stateStore{dir: dir, logger: slog.New(slog.DiscardHandler)}
	for _, set := range [][]string{{"a", "b"}, {"c"}, {}} {
		if err := s.save(entriesNamed(set...)); err != nil {
			t.Fatal(err)
		}
		if got := loadNames(t, dir); strings.Join(got, ",") != strings.Join(set, ",") {
			t.Errorf("saved %q, read %q", set, got)
		}
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state directory mode = %v, %v; want 0700", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the state directory holds %d files, want only %s", len(entries), StateFile)
	}
}

func TestDefaultStateDir(t *testing.T) {
	tests := []struct {
		name, xdg, home, want string
	}{
		{"XDG_STATE_HOME", "/x/state", "/home/u", "/x/state/webmcp-cdp"},
		{"relative XDG_STATE_HOME is ignored", "rel", "/home/u", "/home/u/.local/state/webmcp-cdp"},
		{"home", "", "/home/u", "/home/u/.local/state/webmcp-cdp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", tt.xdg)
			t.Setenv("HOME", tt.home)
			if got := DefaultStateDir(); got != tt.want {
				t.Errorf("DefaultStateDir() = %q, want %q", got, tt.want)
			}
		})
	}
}
