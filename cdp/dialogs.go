package cdp

import (
	"context"
	"errors"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// startCall records a call into target t and returns its context: the
// caller's, cancelled with core.ErrPageCrashed if t's renderer crashes, and
// known to onDialog (see track). The returned func ends the call.
func (b *Browser) startCall(ctx context.Context, t *targetState) (context.Context, func()) {
	cctx, cancel := context.WithCancelCause(ctx)
	rc := &runningCall{cancel: cancel}
	b.mu.Lock()
	if t.calls == nil {
		t.calls = make(map[*runningCall]struct{})
	}
	t.calls[rc] = struct{}{}
	b.mu.Unlock()
	untrack := b.track(cctx, t.tab)
	return cctx, func() {
		untrack()
		b.mu.Lock()
		delete(t.calls, rc)
		b.mu.Unlock()
		cancel(nil)
	}
}

// crashed reports whether a call's context ended because its page crashed
// (rather than because its caller gave up).
func crashed(cctx context.Context) bool {
	return errors.Is(context.Cause(cctx), core.ErrPageCrashed)
}

// track records a call running in a tab, so that a dialog the page opens
// meanwhile reaches the caller's core.DialogFunc. The returned func forgets
// the call.
func (b *Browser) track(ctx context.Context, tab string) func() {
	e := &ctx
	b.mu.Lock()
	if b.inflight == nil {
		b.inflight = make(map[string][]*context.Context)
	}
	b.inflight[tab] = append(b.inflight[tab], e)
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		list := b.inflight[tab]
		for i, x := range list {
			if x == e {
				b.inflight[tab] = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(b.inflight[tab]) == 0 {
			delete(b.inflight, tab)
		}
	}
}

// onDialog answers a JavaScript dialog. While a call with a DialogFunc runs
// in the tab, the dialog goes to it (the oldest such call: dialogs block the
// page, so it is the one most likely waiting). Otherwise nobody can answer:
// alerts are accepted, the rest dismissed (confirm() returns false,
// prompt() null), so the page never hangs.
func (b *Browser) onDialog(t *targetState, params jsonv2.Value) {
	var ev page.EventJavascriptDialogOpening
	if decode(params, &ev) != nil {
		return
	}
	d := core.Dialog{Type: string(ev.Type), Message: truncate(ev.Message, 4096), DefaultPrompt: truncate(ev.DefaultPrompt, 4096), URL: ev.URL}
	var answer core.DialogFunc
	var ctx context.Context
	b.mu.Lock()
	for _, c := range b.inflight[t.tab] {
		if f := core.DialogFuncFrom(*c); f != nil {
			answer, ctx = f, *c
			break
		}
	}
	b.mu.Unlock()
	if answer == nil {
		b.logger.Warn("dismissed a page dialog: no call that could ask a person was running", "type", ev.Type, "message", truncate(ev.Message, 200), "url", ev.URL)
		go t.sess.Send(page.CommandHandleJavaScriptDialog, &page.HandleJavaScriptDialogParams{Accept: ev.Type == page.DialogTypeAlert})
		return
	}
	go func() {
		a := answer(ctx, d)
		b.logger.Info("answered a page dialog", "type", ev.Type, "accept", a.Accept)
		t.sess.Send(page.CommandHandleJavaScriptDialog, &page.HandleJavaScriptDialogParams{Accept: a.Accept, PromptText: a.Text})
	}()
}
