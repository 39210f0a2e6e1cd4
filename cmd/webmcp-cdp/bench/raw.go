package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	cdpt "github.com/chromedp/cdproto/cdp"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// RawCaller launches its own headless browser on url and returns a func
// making one Runtime.callFunctionOn round trip into the page (the floor that
// tools/call is compared with), a func that closes the browser, and the
// browser's product name. The call func may be used from several goroutines
// at once.
func RawCaller(ctx context.Context, url string) (func(context.Context) error, func(), string, error) {
	r, err := newRawBrowser(ctx, url)
	if err != nil {
		return nil, nil, "", err
	}
	return r.call, r.close, r.product, nil
}

// rawBrowser is the floor of the bench: a browser of its own, driven over
// raw CDP, with the bench page open in one tab.
type rawBrowser struct {
	product string
	// call makes one Runtime.callFunctionOn round trip into the page; it
	// may be used from several goroutines at once.
	call func(context.Context) error
	// navigate sends the tab to a URL and returns when its load event
	// fired (one goroutine at a time).
	navigate func(ctx context.Context, url string) error
	close    func()
}

func newRawBrowser(ctx context.Context, url string) (*rawBrowser, error) {
	proc, err := cdp.Launch(ctx, cdp.LaunchOptions{Headless: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, fmt.Errorf("launching the browser for raw CDP calls: %w", err)
	}
	fail := func(err error) (*rawBrowser, error) {
		proc.Close()
		return nil, fmt.Errorf("raw CDP browser: %w", err)
	}
	conn := proc.Conn()
	v, err := cdp.Version(ctx, conn)
	if err != nil {
		return fail(err)
	}
	// One tab for the calls, another for the navigations, so that the
	// navigations never take the calls' document away.
	sess, obj, err := rawTab(ctx, conn, url)
	if err != nil {
		return fail(err)
	}
	navSess, _, err := rawTab(ctx, conn, url)
	if err != nil {
		return fail(err)
	}
	call := rawCall(sess, obj)
	navigate, err := loadNavigator(ctx, navSess)
	if err != nil {
		return fail(err)
	}
	return &rawBrowser{product: v.Product, call: call, navigate: navigate, close: func() { proc.Close() }}, nil
}

// rawCall returns a func making one Runtime.callFunctionOn round trip into
// the document obj of the tab sess; it may be used from several goroutines
// at once.
func rawCall(sess *cdp.Session, obj cdpruntime.RemoteObjectID) func(context.Context) error {
	yes := true
	params := cdpruntime.CallFunctionOnParams{
		FunctionDeclaration: "async function(s){return JSON.stringify({ok:true,value:s})}",
		ObjectID:            obj,
		Arguments:           []*cdpruntime.CallArgument{{Value: []byte(`"x"`)}},
		AwaitPromise:        &yes,
		ReturnByValue:       &yes,
	}
	return func(ctx context.Context) error {
		if _, err := cdpt.Call(ctx, sess, cdpruntime.CallFunctionOn, params); err != nil {
			return fmt.Errorf("raw Runtime.callFunctionOn: %w", err)
		}
		return nil
	}
}

// rawTab opens url in a new tab of the raw browser, attaches to it, waits
// for its document to be complete and returns the session and a handle to
// the document.
func rawTab(ctx context.Context, conn *cdp.Conn, url string) (*cdp.Session, cdpruntime.RemoteObjectID, error) {
	created, err := cdpt.Call(ctx, conn.Browser(), target.CreateTarget, target.CreateTargetParams{URL: url})
	if err != nil {
		return nil, "", fmt.Errorf("opening %s: %w", url, err)
	}
	flatten := true
	att, err := cdpt.Call(ctx, conn.Browser(), target.AttachToTarget, target.AttachToTargetParams{TargetID: created.TargetID, Flatten: &flatten})
	if err != nil {
		return nil, "", fmt.Errorf("attaching to the bench tab: %w", err)
	}
	sess := conn.Attach(att.SessionID)
	var obj cdpruntime.RemoteObjectID
	for deadline := time.Now().Add(10 * time.Second); obj == ""; {
		res, err := cdpt.Call(ctx, sess, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: "location.href !== 'about:blank' && document.readyState === 'complete' ? document : null"})
		if err == nil && res.Result != nil {
			obj = res.Result.ObjectID
		}
		if time.Now().After(deadline) {
			return nil, "", errors.New("the bench page did not load within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return sess, obj, nil
}
