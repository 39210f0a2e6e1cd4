package serve

import (
	"log/slog"
	"strings"
	"sync"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
)

// This file logs the tabs the browser shows; the logger itself is
// internal/logging.

// tabLog is the hub as the browser's sink, logging each tab by its URL
// when it first shows a page or goes to another URL, with its title once
// the page has one (the browser first reports an empty title, or the URL).
type tabLog struct {
	*hub.Hub
	log  *slog.Logger
	mu   sync.Mutex
	tabs map[string]tabSeen
}

// newTabLog returns the hub h as a browser's sink, logging to log.
func newTabLog(h *hub.Hub, log *slog.Logger) *tabLog {
	return &tabLog{Hub: h, log: log, tabs: map[string]tabSeen{}}
}

// tabSeen is what tabLog logged of a tab.
type tabSeen struct {
	url   string
	title bool // a real title was logged for url
}

// realTitle reports whether title is the page's own, not the browser's
// stand-in while it loads.
func realTitle(url, title string) bool {
	if title == "" {
		return false
	}
	_, rest, ok := strings.Cut(url, "://")
	return title != url && (!ok || title != rest)
}

// TabOpened implements cdp.Sink.
func (t *tabLog) TabOpened(id, url, title string) {
	real := realTitle(url, title)
	t.mu.Lock()
	old, known := t.tabs[id]
	now := tabSeen{url: url, title: real || (known && old.url == url && old.title)}
	t.tabs[id] = now
	t.mu.Unlock()
	t.Hub.TabOpened(id, url, title)
	switch {
	case !known || old.url != url:
		verb := "tab"
		if known {
			verb = "tab navigated"
		}
		if real {
			t.log.Info(verb, "url", url, "title", title)
		} else {
			t.log.Info(verb, "url", url)
		}
	case real && !old.title:
		t.log.Info("tab title", "url", url, "title", title)
	default:
		t.log.Debug("tab title", "url", url, "title", title)
	}
}

// TabLost implements what cdp/multi asks of its sink: a tab of a
// browser whose connection dropped (its tools stay cached).
func (t *tabLog) TabLost(id string) {
	t.mu.Lock()
	delete(t.tabs, id)
	t.mu.Unlock()
	t.Hub.TabLost(id)
}

// TabClosed implements cdp.Sink.
func (t *tabLog) TabClosed(id string) {
	t.mu.Lock()
	seen, known := t.tabs[id]
	delete(t.tabs, id)
	t.mu.Unlock()
	t.Hub.TabClosed(id)
	if known {
		t.log.Info("tab closed", "url", seen.url)
	}
}
