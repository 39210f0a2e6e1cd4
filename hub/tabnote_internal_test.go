package hub

import (
	"log/slog"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// TestTabLoadedBeforeNote: a tab that loaded before we attached and has no
// tools says they appear after a reload; tools, or a new document, end the
// note.
func TestTabLoadedBeforeNote(t *testing.T) {
	h := New(nopBrowser{}, Options{Logger: slog.New(slog.DiscardHandler)})
	note := func() string {
		t.Helper()
		tabs := h.Tabs()
		if len(tabs) != 1 {
			t.Fatalf("%d tabs, want 1", len(tabs))
		}
		return tabs[0].Note
	}
	h.TabLoadedBefore("T", true) // not a tab yet: nothing to mark
	h.TabOpened("T", "https://a.test/", "A")
	if got := note(); got != "" {
		t.Errorf("a tab opened after attach has the note %q", got)
	}
	h.TabLoadedBefore("T", true)
	if got := note(); got != NoteReload {
		t.Errorf("note %q, want %q", got, NoteReload)
	}
	src := core.Source{Key: "doc", Tab: "T", Frame: "T", Origin: "https://a.test", URL: "https://a.test/", Backend: "polyfill"}
	h.Update(src, []core.Tool{{Name: "t", Description: "d"}}, nil)
	if got := note(); got != "" {
		t.Errorf("a tab with tools has the note %q", got)
	}
	h.DropDoc("doc")
	if got := note(); got != NoteReload {
		t.Errorf("note %q once its tools went, want the reload note", got)
	}
	h.TabLoadedBefore("T", false) // it loaded a new document
	if got := note(); got != "" {
		t.Errorf("note %q after a new document, want none", got)
	}
}
