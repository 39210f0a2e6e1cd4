package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// StateFile is the name of the state file in the state directory.
const StateFile = "state.json"

// stateVersion is the format of the state file.
const stateVersion = 1

// DefaultStateDir returns the directory for the state file:
// $XDG_STATE_HOME/webmcp-cdp, else ~/.local/state/webmcp-cdp. It returns ""
// when neither is known.
func DefaultStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "webmcp-cdp")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "state", "webmcp-cdp")
}

// stateDoc is the state file's content.
type stateDoc struct {
	Version int          `json:"version"`
	Tools   []cacheEntry `json:"tools"`
}

// cacheEntry is a cached tool: a tool a page registered with
// annotations.cache true, kept listed after its tab closes and across
// restarts.
type cacheEntry struct {
	// Origin and URL are the page's; calling the tool with no page open
	// opens URL.
	Origin string `json:"origin"`
	URL    string `json:"url"`
	// Name is the routed name it had, kept across restarts when free.
	Name string `json:"name"`
	// Backend is "native" or "polyfill", as last seen.
	Backend string `json:"backend,omitempty"`
	// Tool is the page's definition.
	Tool savedTool `json:"tool"`
	// Seen is the last time an open page had the tool.
	Seen time.Time `json:"seen"`
	// lost: the tool has no annotations.cache; it is cached only because
	// its browser's connection was lost (TabLost). Never written to the
	// state file; it goes when the tool is live again.
	lost bool
}

// savedTool is a Tool as the state file holds it.
type savedTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	Annotations map[string]any  `json:"annotations,omitempty"`
	// What a page server's tool carries besides (core.Tool), so that a
	// cached tool is listed as its page gave it while the page is closed.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Icons        json.RawMessage `json:"icons,omitempty"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
	// Userscript is the @name of the userscript that registered it.
	Userscript string `json:"userscript,omitempty"`
}

func (s savedTool) tool() core.Tool {
	return core.Tool{Name: s.Name, Title: s.Title, Description: s.Description, InputSchema: s.InputSchema, Annotations: s.Annotations,
		OutputSchema: s.OutputSchema, Icons: s.Icons, Meta: s.Meta, Userscript: s.Userscript}
}

func saveTool(t core.Tool) savedTool {
	return savedTool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, Annotations: t.Annotations,
		OutputSchema: t.OutputSchema, Icons: t.Icons, Meta: t.Meta, Userscript: t.Userscript}
}

// stateStore reads and writes the state file. Writes are atomic: a temporary
// file in the same directory is written, synced and renamed over the old
// file, and the directory is synced; a crash leaves the old file or the new
// one, never half of one.
type stateStore struct {
	dir    string
	logger *slog.Logger
	// beforeRename, when set, runs between writing the temporary file and
	// renaming it (tests use it to crash there).
	beforeRename func()
}

func (s *stateStore) path() string { return filepath.Join(s.dir, StateFile) }

// load reads the cached tools, dropping those not seen within ttl. A
// missing file is no cached tools. A file that cannot be parsed is renamed
// aside (state.json.corrupt-<time>) and reported; an unreadable one is
// reported; neither is fatal.
func (s *stateStore) load(ttl time.Duration, now time.Time) []cacheEntry {
	s.removeStaleTemps(now)
	raw, err := os.ReadFile(s.path())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		s.logger.Warn("cannot read the state file; starting with no cached tools", "path", s.path(), "err", err)
		return nil
	}
	var doc stateDoc
	err = json.Unmarshal(raw, &doc)
	if err == nil && doc.Version != stateVersion {
		err = fmt.Errorf("it has format version %d, this program reads version %d", doc.Version, stateVersion)
	}
	if err != nil {
		aside := s.path() + ".corrupt-" + now.UTC().Format("20060102T150405")
		if rerr := os.Rename(s.path(), aside); rerr != nil {
			s.logger.Warn("the state file is corrupt and cannot be set aside; starting with no cached tools",
				"path", s.path(), "reason", err, "rename_err", rerr)
		} else {
			s.logger.Warn("the state file is corrupt; set it aside and started with no cached tools",
				"path", s.path(), "moved_to", aside, "reason", err)
		}
		return nil
	}
	out := doc.Tools[:0]
	pruned := 0
	for _, e := range doc.Tools {
		if e.Origin == "" || e.URL == "" || e.Tool.Name == "" || now.Sub(e.Seen) > ttl {
			pruned++
			continue
		}
		out = append(out, e)
	}
	// An empty state is no news: a command that then fails to start its
	// browser says so in one line.
	level := slog.LevelInfo
	if len(out) == 0 && pruned == 0 {
		level = slog.LevelDebug
	}
	s.logger.Log(context.Background(), level, "read the state file", "path", s.path(), "cached_tools", len(out), "pruned", pruned)
	return out
}

// removeStaleTemps removes temporary files that a crash left behind.
func (s *stateStore) removeStaleTemps(now time.Time) {
	matches, _ := filepath.Glob(filepath.Join(s.dir, "."+StateFile+".*.tmp"))
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil && now.Sub(fi.ModTime()) > time.Minute {
			os.Remove(m)
		}
	}
}

// save writes the cached tools atomically.
func (s *stateStore) save(entries []cacheEntry) error {
	raw, err := json.MarshalIndent(stateDoc{Version: stateVersion, Tools: entries}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the state: %w", err)
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("creating the state directory: %w", err)
	}
	tmp, err := os.CreateTemp(s.dir, "."+StateFile+".*.tmp")
	if err != nil {
		return fmt.Errorf("creating a temporary state file: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(raw); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp.Name(), err)
	}
	if s.beforeRename != nil {
		s.beforeRename()
	}
	if err := os.Rename(tmp.Name(), s.path()); err != nil {
		return fmt.Errorf("replacing the state file: %w", err)
	}
	done = true
	if d, err := os.Open(s.dir); err == nil {
		// Make the rename durable. Some file systems cannot sync a
		// directory; the file is whole either way.
		d.Sync()
		d.Close()
	}
	return nil
}

// entryID is the identity of a cached tool: its origin and its name.
func entryID(origin, tool string) string {
	return origin + "\x00" + tool
}

// cacheFlag reports whether a tool asked to be cached.
func cacheFlag(t core.Tool) bool {
	v, _ := t.Annotations["cache"].(bool)
	return v
}

// sameTool reports whether two definitions are equal.
func sameTool(a, b core.Tool) bool {
	if a.Name != b.Name || a.Title != b.Title || a.Description != b.Description || string(a.InputSchema) != string(b.InputSchema) {
		return false
	}
	if len(a.Annotations) != len(b.Annotations) {
		return false
	}
	for k, v := range a.Annotations {
		w, ok := b.Annotations[k]
		if !ok || !sameJSONValue(v, w) {
			return false
		}
	}
	return true
}

func sameJSONValue(a, b any) bool {
	switch a := a.(type) {
	case bool, string, float64, nil:
		return a == b
	}
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
