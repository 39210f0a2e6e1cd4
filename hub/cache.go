package hub

import (
	"sort"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// maxCachedTools bounds the cached tools kept; the longest unseen go first.
const maxCachedTools = 1000

// cacheToolLocked keeps the cached entry of a live tool up to date: a tool
// with annotations.cache gets or refreshes its entry, another loses it.
func (h *Hub) cacheToolLocked(d core.Source, tl core.Tool, dirty map[string]bool) {
	id := entryID(d.Origin, tl.Name)
	e := h.cache[id]
	if !cacheFlag(tl) {
		if e != nil {
			delete(h.cache, id)
			if !e.lost { // a lost entry was never in the state file
				h.markDirtyLocked()
			}
		}
		return
	}
	now := time.Now()
	if e != nil && !e.lost && e.URL == d.URL && e.Backend == string(d.Backend) && sameDefinition(e.Tool.tool(), tl) {
		if now.Sub(e.Seen) > time.Minute {
			e.Seen = now
			h.markDirtyLocked()
		}
		return
	}
	ne := &cacheEntry{Origin: d.Origin, URL: d.URL, Backend: string(d.Backend), Tool: saveTool(tl), Seen: now}
	if e != nil {
		ne.Name = e.Name
	}
	h.cache[id] = ne
	if len(h.cache) > maxCachedTools {
		var oldest string
		for k, c := range h.cache {
			if oldest == "" || c.Seen.Before(h.cache[oldest].Seen) {
				oldest = k
			}
		}
		delete(h.cache, oldest)
		dirty[oldest] = true
	}
	h.markDirtyLocked()
}

// markDirtyLocked schedules a write of the state file.
func (h *Hub) markDirtyLocked() {
	h.dirty = true
	if h.store == nil || h.saving != nil {
		return
	}
	h.saving = make(chan struct{})
	go h.saveLoop(h.saving)
}

// minSaveGap spaces the writes of the state file under a stream of changes:
// a page that re-registers a cached tool without pause costs at most two
// writes (each with an fsync) a second; Close writes what is left at once.
const minSaveGap = 500 * time.Millisecond

// saveLoop writes the state file until it is up to date, then closes done.
// After every write it waits saveGap before the next (so at most one write
// per gap), unless Close asks for the rest at once.
func (h *Hub) saveLoop(done chan struct{}) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		h.mu.Lock()
		if !h.dirty {
			h.saving = nil
			h.flushNow = false
			select {
			case <-h.kick:
			default:
			}
			close(done)
			h.mu.Unlock()
			return
		}
		h.dirty = false
		entries := make([]cacheEntry, 0, len(h.cache))
		for _, e := range h.cache {
			if !e.lost {
				entries = append(entries, *e)
			}
		}
		h.mu.Unlock()
		sort.Slice(entries, func(i, j int) bool {
			return entryID(entries[i].Origin, entries[i].Tool.Name) < entryID(entries[j].Origin, entries[j].Tool.Name)
		})
		err := h.store.save(entries)
		if err != nil {
			h.logger.Warn("cannot write the state file; cached tools will not survive a restart", "dir", h.store.dir, "err", err)
		}
		h.mu.Lock()
		h.saveErr = err
		// Wait out the gap after every write, changes or not: a change that
		// comes a moment after this write must not start a new writer that
		// writes at once (a page changing a cached tool every 20 ms made
		// about 40 writes a second that way).
		wait := !h.flushNow
		h.mu.Unlock()
		if !wait {
			continue
		}
		if timer == nil {
			timer = time.NewTimer(h.saveGap)
		} else {
			timer.Reset(h.saveGap)
		}
		select {
		case <-timer.C:
		case <-h.kick:
			timer.Stop()
		}
	}
}
