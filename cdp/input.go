package cdp

// This file holds the browser actions that the relay's forwarded methods need
// on top of actions.go: screenshots, pointer and keyboard input, history
// navigation, navigation that waits for the load, and a raw CDP command for
// callers that opted in. Elements are found with the DOM domain, not with
// script in the page, so a page cannot change what a selector finds or where
// a click lands by replacing its own globals.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	cdpt "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
)

// session returns the tab's session once it is set up, or an error that
// names the tab; it gives up when ctx ends or the connection closes.
func (b *Browser) session(ctx context.Context, tab, doing string) (*Session, error) {
	s, err := b.readyTab(ctx, tab)
	if err != nil {
		return nil, fmt.Errorf("%s in tab %s: %w", doing, tab, err)
	}
	return s, nil
}

// Screenshot captures what the tab shows as an image. format is "png"
// (the default), "jpeg" or "webp"; quality (1-100) applies to jpeg and webp.
// fullPage captures the whole scrollable page instead of the viewport.
func (b *Browser) Screenshot(ctx context.Context, tab, format string, quality int, fullPage bool) ([]byte, error) {
	s, err := b.session(ctx, tab, "taking a screenshot")
	if err != nil {
		return nil, err
	}
	params := page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng}
	switch format {
	case "", "png":
	case "jpeg", "webp":
		params.Format = page.CaptureScreenshotFormat(format)
		if quality > 0 {
			q := int64(min(quality, 100))
			params.Quality = &q
		}
	default:
		return nil, fmt.Errorf("screenshot format %q: use png, jpeg or webp", format)
	}
	if fullPage {
		m, err := cdpt.Call(ctx, s, page.GetLayoutMetrics, cdpt.Empty{})
		if err != nil {
			return nil, fmt.Errorf("measuring the page of tab %s for a full-page screenshot: %w", tab, err)
		}
		if m.CSSContentSize != nil && m.CSSContentSize.Width > 0 && m.CSSContentSize.Height > 0 {
			params.Clip = &page.Viewport{Width: m.CSSContentSize.Width, Height: m.CSSContentSize.Height, Scale: 1}
			params.CaptureBeyondViewport = ptr(true)
		}
	}
	res, err := cdpt.Call(ctx, s, page.CaptureScreenshot, params)
	if err != nil {
		return nil, fmt.Errorf("taking a screenshot of tab %s: %w", tab, err)
	}
	return res.Data, nil
}

// find returns the node of the first element that matches a CSS selector
// in the tab's main document.
func find(ctx context.Context, s *Session, selector string) (cdpt.NodeID, error) {
	if selector == "" {
		return 0, errors.New("the selector is empty")
	}
	doc, err := cdpt.Call(ctx, s, dom.GetDocument, dom.GetDocumentParams{Depth: ptr(int64(0))})
	if err != nil {
		return 0, fmt.Errorf("reading the document: %w", err)
	}
	if doc.Root == nil {
		return 0, errors.New("the tab has no document yet")
	}
	found, err := cdpt.Call(ctx, s, dom.QuerySelector, dom.QuerySelectorParams{NodeID: doc.Root.NodeID, Selector: selector})
	if err != nil {
		return 0, fmt.Errorf("looking for %q: %w", selector, err)
	}
	if found.NodeID == 0 {
		return 0, fmt.Errorf("no element matches %q", selector)
	}
	// Scrolling fails for elements that have no layout; callers that need a
	// box say so more clearly.
	_, _ = cdpt.Call(ctx, s, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{NodeID: found.NodeID})
	return found.NodeID, nil
}

// locate finds the first element that matches a CSS selector, scrolls it
// into view, and returns the viewport coordinates of its center.
func locate(ctx context.Context, s *Session, selector string) (x, y float64, err error) {
	node, err := find(ctx, s, selector)
	if err != nil {
		return 0, 0, err
	}
	quads, err := cdpt.Call(ctx, s, dom.GetContentQuads, dom.GetContentQuadsParams{NodeID: node})
	if err != nil {
		return 0, 0, fmt.Errorf("finding where %q is: %w", selector, err)
	}
	for _, q := range quads.Quads {
		if len(q) != 8 {
			continue
		}
		x = (q[0] + q[2] + q[4] + q[6]) / 4
		y = (q[1] + q[3] + q[5] + q[7]) / 4
		return x, y, nil
	}
	return 0, 0, fmt.Errorf("the element %q is not rendered (it has no box to click)", selector)
}

// Click clicks the center of the first element that matches selector.
func (b *Browser) Click(ctx context.Context, tab, selector string) error {
	s, err := b.session(ctx, tab, "clicking")
	if err != nil {
		return err
	}
	x, y, err := locate(ctx, s, selector)
	if err != nil {
		return fmt.Errorf("clicking in tab %s: %w", tab, err)
	}
	return click(ctx, s, tab, x, y)
}

// ClickAt clicks at viewport coordinates (CSS pixels).
func (b *Browser) ClickAt(ctx context.Context, tab string, x, y float64) error {
	s, err := b.session(ctx, tab, "clicking")
	if err != nil {
		return err
	}
	return click(ctx, s, tab, x, y)
}

func click(ctx context.Context, s *Session, tab string, x, y float64) error {
	steps := []input.DispatchMouseEventParams{
		{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y},
		{Type: input.DispatchMouseEventTypeMousePressed, X: x, Y: y, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1},
		{Type: input.DispatchMouseEventTypeMouseReleased, X: x, Y: y, Button: input.MouseButtonLeft, ClickCount: 1},
	}
	for _, p := range steps {
		if _, err := cdpt.Call(ctx, s, input.DispatchMouseEvent, p); err != nil {
			return fmt.Errorf("clicking at (%.0f, %.0f) in tab %s: %w", x, y, tab, err)
		}
	}
	return nil
}

// Hover moves the mouse over the center of the first element that matches
// selector.
func (b *Browser) Hover(ctx context.Context, tab, selector string) error {
	s, err := b.session(ctx, tab, "hovering")
	if err != nil {
		return err
	}
	x, y, err := locate(ctx, s, selector)
	if err != nil {
		return fmt.Errorf("hovering in tab %s: %w", tab, err)
	}
	return hover(ctx, s, tab, x, y)
}

// HoverAt moves the mouse to viewport coordinates (CSS pixels).
func (b *Browser) HoverAt(ctx context.Context, tab string, x, y float64) error {
	s, err := b.session(ctx, tab, "hovering")
	if err != nil {
		return err
	}
	return hover(ctx, s, tab, x, y)
}

func hover(ctx context.Context, s *Session, tab string, x, y float64) error {
	if _, err := cdpt.Call(ctx, s, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y}); err != nil {
		return fmt.Errorf("moving the mouse to (%.0f, %.0f) in tab %s: %w", x, y, tab, err)
	}
	return nil
}

// Type inserts text into the element that matches selector (focused first),
// or into the focused element when selector is empty. With submit it then
// presses Enter.
func (b *Browser) Type(ctx context.Context, tab, selector, text string, submit bool) error {
	s, err := b.session(ctx, tab, "typing")
	if err != nil {
		return err
	}
	if selector != "" {
		node, err := find(ctx, s, selector)
		if err != nil {
			return fmt.Errorf("typing in tab %s: %w", tab, err)
		}
		if _, err := cdpt.Call(ctx, s, dom.Focus, dom.FocusParams{NodeID: node}); err != nil {
			return fmt.Errorf("typing in tab %s: focusing %q: %w", tab, selector, err)
		}
	}
	if text != "" {
		if _, err := cdpt.Call(ctx, s, input.InsertText, input.InsertTextParams{Text: text}); err != nil {
			return fmt.Errorf("typing in tab %s: %w", tab, err)
		}
	}
	if submit {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
			p := input.DispatchKeyEventParams{Type: typ, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13}
			if typ == input.DispatchKeyEventTypeKeyDown {
				p.Text = "\r"
			}
			if _, err := cdpt.Call(ctx, s, input.DispatchKeyEvent, p); err != nil {
				return fmt.Errorf("pressing Enter in tab %s: %w", tab, err)
			}
		}
	}
	return nil
}

// NavigateAndWait loads url in a tab and waits for the page's load event
// (at most 15 s; a page that loads longer is not an error), and until the
// Sink knows the tab's new state.
func (b *Browser) NavigateAndWait(ctx context.Context, tab, url string) error {
	s, err := b.session(ctx, tab, "navigating")
	if err != nil {
		return err
	}
	_, err = waitNavigation(ctx, s, cdpt.FrameID(tab), func() (navStart, error) {
		return navigateCall(ctx, s, url)
	})
	if err == nil {
		err = b.sink.flush(ctx)
	}
	if err != nil {
		return fmt.Errorf("navigating tab %s to %s: %w", tab, url, err)
	}
	return nil
}

// GoBack goes one entry back in the tab's history and returns the URL it
// went to.
func (b *Browser) GoBack(ctx context.Context, tab string) (string, error) {
	return b.history(ctx, tab, -1)
}

// GoForward goes one entry forward in the tab's history and returns the URL
// it went to.
func (b *Browser) GoForward(ctx context.Context, tab string) (string, error) {
	return b.history(ctx, tab, +1)
}

func (b *Browser) history(ctx context.Context, tab string, delta int) (string, error) {
	way := "back"
	if delta > 0 {
		way = "forward"
	}
	s, err := b.session(ctx, tab, "going "+way)
	if err != nil {
		return "", err
	}
	h, err := cdpt.Call(ctx, s, page.GetNavigationHistory, cdpt.Empty{})
	if err != nil {
		return "", fmt.Errorf("reading the history of tab %s: %w", tab, err)
	}
	i := int(h.CurrentIndex) + delta
	if i < 0 || i >= len(h.Entries) || h.Entries[i] == nil {
		return "", fmt.Errorf("tab %s has no page to go %s to", tab, way)
	}
	entry := h.Entries[i]
	_, err = waitNavigation(ctx, s, cdpt.FrameID(tab), func() (navStart, error) {
		_, err := cdpt.Call(ctx, s, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: entry.ID})
		return navStart{}, err
	})
	if err == nil {
		err = b.sink.flush(ctx)
	}
	if err != nil {
		return "", fmt.Errorf("going %s in tab %s: %w", way, tab, err)
	}
	return entry.URL, nil
}

// cdpMethod is the shape of a CDP method name: Domain.method.
var cdpMethod = regexp.MustCompile(`^[A-Z][A-Za-z]*\.[a-z][A-Za-z]*$`)

// RawCommand sends one CDP command to a tab's session and returns its raw
// result. It is the escape hatch behind the relay's forwardCDPCommand, which
// is off unless the user turns it on: a raw command can do anything to the
// tab, including undoing webmcp-cdp's own setup.
func (b *Browser) RawCommand(ctx context.Context, tab, method string, params json.RawMessage) (json.RawMessage, error) {
	if !cdpMethod.MatchString(method) {
		return nil, fmt.Errorf("%q is not a CDP method name (Domain.method, e.g. Page.reload)", method)
	}
	s, err := b.session(ctx, tab, "sending "+method)
	if err != nil {
		return nil, err
	}
	var p any
	if len(params) > 0 && string(params) != "null" {
		p = jsonv2.Value(params)
	}
	var res jsonv2.Value
	if err := s.Call(ctx, method, p, &res); err != nil {
		return nil, fmt.Errorf("tab %s: %w", tab, err)
	}
	if len(res) == 0 {
		return json.RawMessage(`{}`), nil
	}
	return json.RawMessage(res), nil
}
