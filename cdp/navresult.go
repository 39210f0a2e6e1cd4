package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	cdpt "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file follows a declarative form whose submission navigates: like
// Chromium's native WebMCP, the call's result is the next document's
// structured data, a JSON array of its application/ld+json blocks (an empty
// array when it has none; a block that is not JSON is left out).

// kindNavigated is the kind the bridge gives a form submission that
// navigates; Invoke turns it into the next document's result.
const kindNavigated core.ResultKind = "navigated"

// navWatch wakes the calls that wait for a frame's next document.
type navWatch struct {
	mu      sync.Mutex
	waiters map[cdpt.FrameID][]chan *docState
}

// wait returns a channel that receives the frame's next document, and a
// func that stops waiting.
func (w *navWatch) wait(f cdpt.FrameID) (<-chan *docState, func()) {
	ch := make(chan *docState, 1)
	w.mu.Lock()
	if w.waiters == nil {
		w.waiters = make(map[cdpt.FrameID][]chan *docState)
	}
	w.waiters[f] = append(w.waiters[f], ch)
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		list := w.waiters[f]
		for i, c := range list {
			if c == ch {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(w.waiters, f)
		} else {
			w.waiters[f] = list
		}
	}
}

// created tells the waiters of d's frame about d (targets.go calls it for
// every new document).
func (w *navWatch) created(d *docState) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ch := range w.waiters[d.frameID] {
		select {
		case ch <- d:
		default:
		}
	}
}

// navDataScript collects the document's JSON-LD once it has been parsed.
const navDataScript = `new Promise((r) => {
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', () => r(), { once: true });
  else r();
}).then(() => {
  const out = [];
  for (const s of document.querySelectorAll('script[type="application/ld+json"]')) {
    try { out.push(JSON.parse(s.textContent)); } catch { /* not JSON: left out */ }
  }
  return JSON.stringify(out);
})`

// navResult waits for the document that replaces d in its frame and
// returns its JSON-LD as the call's result.
func (b *Browser) navResult(ctx context.Context, d *docState) (core.Result, error) {
	ch, stop := b.navs.wait(d.frameID)
	defer stop()
	next := b.nextDoc(d)
	for next == nil {
		select {
		case nd := <-ch:
			if nd != d && nd.origin != "" {
				next = nd
			}
		case <-ctx.Done():
			return core.Result{}, fmt.Errorf("the form was submitted, but its next page did not load: %w", context.Cause(ctx))
		}
	}
	res, err := cdpt.Call(ctx, next.t.sess, runtime.Evaluate, runtime.EvaluateParams{
		Expression:      navDataScript,
		UniqueContextID: next.uniqueID,
		AwaitPromise:    ptr(true),
		ReturnByValue:   ptr(true),
		Silent:          ptr(true),
	})
	var value string
	switch {
	case err != nil:
	case res.ExceptionDetails != nil:
		err = errors.New(exceptionText(res.ExceptionDetails))
	case res.Result == nil || json.Unmarshal(res.Result.Value, &value) != nil:
		err = errors.New("no JSON text came back")
	}
	if err != nil {
		return core.Result{}, fmt.Errorf("the form was submitted, but the next page's data could not be read: %w", err)
	}
	out := core.Result{Kind: core.KindJSON, Value: value}
	if m := b.opts.Limits.MaxResult; len(value) > m {
		out.Value, out.Truncated = value[:m], len(value)
	}
	return out, nil
}

// nextDoc is a document already created in d's frame after d, or nil.
func (b *Browser) nextDoc(d *docState) *docState {
	b.mu.Lock()
	defer b.mu.Unlock()
	var next *docState
	for _, o := range b.docs {
		if o != d && o.alive && o.frameID == d.frameID && (o.t != d.t || o.ctxID > d.ctxID) && (next == nil || o.ctxID > next.ctxID) {
			next = o
		}
	}
	return next
}
