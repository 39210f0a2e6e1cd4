package cdp

import (
	"context"
	"time"

	"github.com/chromedp/cdproto"
	cdpt "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
)

// This file holds the one wait for a navigation to arrive, used by every
// action that navigates a tab (Reload, NavigateAndWait, GoBack/GoForward,
// Open): it wakes on the tab's page events, never on a clock or a question
// to the page.

// loadWait bounds how long a navigation waits for the page's load event
// before it reports success anyway: the navigation has started, and a page
// that keeps loading is not an error.
const loadWait = 15 * time.Second

// navStart is what the command that started a navigation said.
type navStart struct {
	// sameDocument: the navigation stays within the document (nothing to
	// wait for).
	sameDocument bool
	// loader is the new document's loader, when the command told it
	// (Page.navigate does; Page.reload and history navigation do not).
	loader cdpt.LoaderID
}

// loadWatch follows a tab's page events from before a navigation starts
// until it arrived. The events come on one channel in the order the
// browser sent them, so a load event is known to be the new document's: it
// comes after that document's commit (Page.frameNavigated of the main
// frame). The load event of the document before it (the tab's first
// about:blank loads late, racing with the navigation) comes before the
// commit and is passed over.
type loadWatch struct {
	frame  cdpt.FrameID // the tab's main frame (a tab's target id is its main frame's id)
	closed <-chan struct{}
	events <-chan *cdproto.Message
	stop   func()
	limit  time.Duration
}

// watchLoad starts following the page events of s, whose main frame
// is frame ("" for any frame). Call stop when done.
func watchLoad(s *Session, frame cdpt.FrameID) *loadWatch {
	events, stop := s.Events(page.FrameNavigated.Method, page.NavigatedWithinDocument.Method, page.LoadEventFired.Method)
	return &loadWatch{frame: frame, closed: s.Closed(), events: events, stop: stop, limit: loadWait}
}

// wait waits until the navigation that started has arrived: its document
// loaded ("load"), it stayed within the document ("same-document" when the
// command said so, "within" when the page says so), or it came back from
// the back-forward cache, which fires no load event ("bfcache"). After
// w.limit it reports "timeout", which is no error: the navigation began. It
// fails with ErrTargetGone when the tab goes, and when ctx ends.
func (w *loadWatch) wait(ctx context.Context, started navStart) (string, error) {
	if started.sameDocument {
		return "same-document", nil
	}
	timer := time.NewTimer(w.limit)
	defer timer.Stop()
	committed := false
	for {
		select {
		case msg, ok := <-w.events:
			if !ok {
				return "", ErrTargetGone
			}
			if how := w.step(msg, started, &committed); how != "" {
				return how, nil
			}
		case <-timer.C:
			return "timeout", nil
		case <-w.closed:
			return "", ErrTargetGone
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// step reads one event: it returns how the navigation arrived, or "" while
// it has not, and notes in committed that the new document committed.
func (w *loadWatch) step(msg *cdproto.Message, started navStart, committed *bool) string {
	switch msg.Method {
	case cdproto.EventPageFrameNavigated:
		var ev page.EventFrameNavigated
		if decode(msg.Params, &ev) != nil || ev.Frame == nil || ev.Frame.ParentID != "" {
			return "" // a child frame's document
		}
		if started.loader != "" && ev.Frame.LoaderID != started.loader {
			return "" // another navigation's document
		}
		if ev.Type == page.NavigationTypeBackForwardCacheRestore {
			return "bfcache"
		}
		*committed = true
	case cdproto.EventPageNavigatedWithinDocument:
		var ev page.EventNavigatedWithinDocument
		if *committed || decode(msg.Params, &ev) != nil || (w.frame != "" && ev.FrameID != w.frame) {
			return "" // the new document's own history change, or a child frame's
		}
		return "within"
	case cdproto.EventPageLoadEventFired:
		if *committed {
			return "load"
		}
		// The document before the new one loaded.
	}
	return ""
}

// waitNavigation runs start and then waits until the navigation it
// started arrived (loadWatch.wait). It follows the tab's events from before
// start, so a fast load is not missed. It returns what ended the wait.
func waitNavigation(ctx context.Context, s *Session, frame cdpt.FrameID, start func() (navStart, error)) (string, error) {
	w := watchLoad(s, frame)
	defer w.stop()
	started, err := start()
	if err != nil {
		return "", err
	}
	return w.wait(ctx, started)
}
