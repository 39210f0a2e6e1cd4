package cdp

import (
	"context"
	"maps"
	"slices"
	"sync"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"

	"github.com/webmcp-cdp/webmcp-cdp/internal/userscript"
)

// This file follows the userscripts in force (Options.Userscripts, a
// userscript.Set replaced when the operator's files are read again): each
// target gets the new set's scripts for the documents it loads from then
// on, and loses the old ones; the documents already open keep what they
// ran. It also notes the documents each script runs in
// (Options.UserscriptRuns).

// targetScripts are the userscripts registered in a target.
type targetScripts struct {
	// mu is held while the target's registrations change (its setup, a
	// sync), never by an event handler: it waits for the browser.
	mu  sync.Mutex
	gen int // the userscripts' set registered (userscripts.gen)
	ids []page.ScriptIdentifier
	// scripts are that set's scripts; under Browser.mu.
	scripts []*userscript.Script
}

// usSetup is a target's first registration of the userscripts, sent with
// its setup steps.
type usSetup struct {
	t      *targetState
	gen    int
	params []jsonv2.Value
	first  int // the setup step of params[0]
	ids    []page.ScriptIdentifier
}

// beginUserscripts takes the set in force for target t's setup, whose
// steps so far number first. endUserscripts must follow.
func (b *Browser) beginUserscripts(t *targetState, first int) *usSetup {
	t.us.mu.Lock()
	gen, scripts, params, _ := b.us.current()
	b.mu.Lock()
	t.us.scripts = scripts
	b.mu.Unlock()
	return &usSetup{t: t, gen: gen, params: params, first: first}
}

// holds says whether setup step i registers a userscript.
func (s *usSetup) holds(i int) bool { return i >= s.first && i < s.first+len(s.params) }

// endUserscripts keeps what the setup registered, and brings the target
// up to a set put in force meanwhile.
func (b *Browser) endUserscripts(s *usSetup) {
	s.t.us.gen, s.t.us.ids = s.gen, s.ids
	s.t.us.mu.Unlock()
	if gen, _, _, _ := b.us.current(); gen != s.gen {
		go b.syncUserscripts(s.t)
	}
}

// followUserscripts puts each new set of the Options' in force, in every
// target, until ctx ends; changed is closed when the set is replaced.
func (b *Browser) followUserscripts(ctx context.Context, changed <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		scripts, past, next := b.opts.Userscripts.Numbered()
		changed = next
		if err := b.us.set(scripts, past); err != nil {
			b.logger.Warn("the userscripts read again cannot be injected; the previous ones stay", "err", err)
			continue
		}
		b.mu.Lock()
		targets := slices.Collect(maps.Values(b.targets))
		b.mu.Unlock()
		var wg sync.WaitGroup
		for _, t := range targets {
			wg.Go(func() { b.syncUserscripts(t) })
		}
		wg.Wait()
		if ctx.Err() == nil {
			b.logger.Info("userscripts in place for the documents loaded from now on (those open keep what they ran)", "scripts", len(scripts), "targets", len(targets))
		}
	}
}

// syncUserscripts registers the set in force in target t, once its setup
// is done, and removes the set it had: documents it loads from now on run
// the new scripts.
func (b *Browser) syncUserscripts(t *targetState) {
	select {
	case <-t.ready:
	case <-b.life.Done():
		return
	}
	t.us.mu.Lock()
	defer t.us.mu.Unlock()
	gen, scripts, _, later := b.us.current()
	if t.us.gen == gen {
		return
	}
	ctx, cancel := context.WithTimeout(b.life, setupTimeout)
	defer cancel()
	// The new scripts first: a document that starts meanwhile runs the
	// old or both, never neither (each runs once, by its name's guard).
	adds := make([]*Pending, 0, len(later))
	for _, p := range later {
		pd, err := t.sess.Send(page.CommandAddScriptToEvaluateOnNewDocument, p)
		if err != nil {
			b.logger.Debug("registering the userscripts read again failed", "target", t.targetID, "err", err)
			return
		}
		adds = append(adds, pd)
	}
	ids := make([]page.ScriptIdentifier, 0, len(adds))
	for _, pd := range adds {
		var r page.AddScriptToEvaluateOnNewDocumentResult
		if err := pd.Wait(ctx, &r); err != nil {
			b.logger.Debug("registering a userscript read again failed", "target", t.targetID, "err", err)
			continue
		}
		ids = append(ids, r.Identifier)
	}
	b.mu.Lock()
	t.us.scripts = scripts
	b.mu.Unlock()
	removes := make([]*Pending, 0, len(t.us.ids))
	for _, id := range t.us.ids {
		if pd, err := t.sess.Send(page.CommandRemoveScriptToEvaluateOnNewDocument, &page.RemoveScriptToEvaluateOnNewDocumentParams{Identifier: id}); err == nil {
			removes = append(removes, pd)
		}
	}
	for _, pd := range removes {
		if err := pd.Wait(ctx, nil); err != nil {
			b.logger.Debug("removing a userscript read before failed", "target", t.targetID, "err", err)
		}
	}
	t.us.gen, t.us.ids = gen, ids
}

// noteRunsLocked notes, in Options.UserscriptRuns, the scripts of t that
// run in a document at url: those whose patterns take it, and not in a
// frame with @noframes. The page tests the very same patterns.
func (b *Browser) noteRunsLocked(t *targetState, url string, top bool) {
	if b.opts.UserscriptRuns == nil {
		return
	}
	for _, s := range t.us.scripts {
		if (top || !s.NoFrames) && s.Runs(url) {
			b.opts.UserscriptRuns.Ran(s.Name, url)
		}
	}
}
