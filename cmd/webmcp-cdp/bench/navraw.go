package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/chromedp/cdproto"
	cdpt "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/webmcp"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// This file holds navload's raw reader (issue 41): a tab set up as the
// floor is (setUpTab), read by the bench itself with the CDP work that
// webmcp-cdp's cdp package does to learn a document's tools, and nothing
// else: no hub, no MCP, no client. Its rows split the attached tab's gap
// to the floor into what reading the tools over CDP costs the page (the
// raw reader to the floor) and what webmcp-cdp adds on top (the attached
// tab to the raw reader).

// rawReader is a tab whose tools the bench reads over raw CDP.
type rawReader struct {
	sess   *cdp.Session
	nav    func(context.Context, string) error
	native bool
	marker string // the bridge hand-off's console.debug marker
	events <-chan *cdproto.Message
}

// rawReaderTab opens the raw reader's tab through conn.
func rawReaderTab(ctx context.Context, conn *cdp.Conn, side backendSide) (*rawReader, error) {
	sess, nav, binding, err := setUpSession(ctx, conn, side)
	if err != nil {
		return nil, err
	}
	return newRawReader(sess, nav, side, binding), nil
}

// newRawReader reads sess, set up with binding's page script; nav
// navigates its tab. It subscribes before the first navigation, so no
// event is lost.
func newRawReader(sess *cdp.Session, nav func(context.Context, string) error, side backendSide, binding string) *rawReader {
	events, _ := sess.Events(cdproto.EventRuntimeConsoleAPICalled, cdproto.EventRuntimeBindingCalled, cdproto.EventWebMCPToolsAdded)
	return &rawReader{sess: sess, nav: nav, native: side.native, events: events,
		marker: polyfill.BridgeMarker + strings.TrimPrefix(binding, "benchBinding")}
}

// wsReaderTab opens the raw reader's tab as webmcp-cdp's attach reads
// one: in a browser of its own started with --remote-debugging-port,
// navigated by the bench over its pipe (as the attached tab is), and read
// over a WebSocket to that port, through a session of the reader's own on
// the tab (found through DevToolsActivePort, as attach --auto-connect
// finds it). Against the raw reader in the bare browser, its rows are
// what reaching the browser as attach does costs, apart from webmcp-cdp's
// process. close ends the browser and the connection.
func wsReaderTab(ctx context.Context, side backendSide, logger *slog.Logger) (r *rawReader, close func(), err error) {
	dir, proc, stop, err := portBrowser(ctx, side.native, logger)
	if err != nil {
		return nil, nil, fmt.Errorf("the WebSocket reader's browser: %w", err)
	}
	var ws *cdp.Conn
	close = func() {
		if ws != nil {
			ws.Close()
		}
		stop()
	}
	defer func() {
		if err != nil {
			close()
		}
	}()
	navSess, id, err := blankTarget(ctx, proc.Conn())
	if err != nil {
		return nil, nil, err
	}
	nav, err := loadNavigator(ctx, navSess)
	if err != nil {
		return nil, nil, err
	}
	ap, err := cdp.FindActivePort([]cdp.UserDataDir{{Browser: "bench", Dir: dir}}, os.ReadFile)
	if err != nil {
		return nil, nil, err
	}
	if ws, err = cdp.AutoConnect(ctx, ap, cdp.AutoConnectOptions{Logger: logger}); err != nil {
		return nil, nil, err
	}
	sess, err := attachTab(ctx, ws, id)
	if err != nil {
		return nil, nil, err
	}
	binding, err := setUpOn(ctx, sess, side)
	if err != nil {
		return nil, nil, err
	}
	return newRawReader(sess, nav, side, binding), close, nil
}

// navigate sends the tab to u and returns the times from the navigation's
// start to its load event and to the bench having the ten tools of prefix:
// on native, from WebMCP.toolsAdded; on the polyfill, read through the
// bridge that the document hands over (its first read carrying the top
// document's "tools" verdict, as webmcp-cdp's does) and read again at each
// ping of the binding.
func (r *rawReader) navigate(ctx context.Context, u, prefix string) (load, tools time.Duration, err error) {
	for len(r.events) > 0 {
		<-r.events
	}
	loaded := make(chan error, 1)
	t0 := time.Now()
	go func() {
		err := r.nav(ctx, u)
		load = time.Since(t0)
		loaded <- err
	}()
	err = r.readTen(ctx, prefix)
	tools = time.Since(t0)
	if lerr := <-loaded; err == nil {
		err = lerr
	}
	return load, tools, err
}

// readTen follows the tab's events until it has the ten tools of prefix.
func (r *rawReader) readTen(ctx context.Context, prefix string) error {
	var bridge cdpruntime.RemoteObjectID
	seen := map[string]bool{}
	for {
		var msg *cdproto.Message
		select {
		case msg = <-r.events:
		case <-ctx.Done():
			return fmt.Errorf("the raw reader did not get the ten tools of %q: %w", prefix, ctx.Err())
		}
		var names []string
		switch msg.Method {
		case cdproto.EventWebMCPToolsAdded:
			var ev webmcp.EventToolsAdded
			if jsonv2.Unmarshal(msg.Params, &ev) != nil {
				continue
			}
			for _, t := range ev.Tools {
				if t != nil {
					names = append(names, t.Name)
				}
			}
		case cdproto.EventRuntimeConsoleAPICalled:
			var ev cdpruntime.EventConsoleAPICalled
			if r.native || jsonv2.Unmarshal(msg.Params, &ev) != nil || ev.Type != cdpruntime.ConsoleAPICalledTypeDebug || len(ev.Args) != 2 {
				continue
			}
			var mark string
			if jsonv2.Unmarshal(ev.Args[0].Value, &mark) != nil || mark != r.marker || ev.Args[1].ObjectID == "" {
				continue
			}
			bridge = ev.Args[1].ObjectID
			list, err := r.list(ctx, bridge, true)
			if err != nil {
				return err
			}
			names = list
		case cdproto.EventRuntimeBindingCalled:
			if r.native || bridge == "" {
				continue
			}
			list, err := r.list(ctx, bridge, false)
			if err != nil {
				return err
			}
			names = list
		}
		for _, n := range names {
			if strings.HasPrefix(n, prefix+"echo_") && (prefix != "" || !strings.HasPrefix(n, "n")) {
				seen[n] = true
			}
		}
		if len(seen) == 10 {
			return nil
		}
	}
}

// list reads the tools' names through the bridge; first hands over the
// verdict as webmcp-cdp's first read of a top-level document does.
func (r *rawReader) list(ctx context.Context, bridge cdpruntime.RemoteObjectID, first bool) ([]string, error) {
	fn := "function(a,b,c){return this.list(a,b,c)}"
	if first {
		fn = "function(a,b,c){this.policy(true);return this.list(a,b,c)}"
	}
	yes := true
	res, err := cdpt.Call(ctx, r.sess, cdpruntime.CallFunctionOn, cdpruntime.CallFunctionOnParams{
		FunctionDeclaration: fn,
		ObjectID:            bridge,
		Arguments:           []*cdpruntime.CallArgument{{Value: jsonv2.Value("64")}, {Value: jsonv2.Value("4096")}, {Value: jsonv2.Value("65536")}},
		ReturnByValue:       &yes,
	})
	if err != nil {
		return nil, fmt.Errorf("the raw reader's read: %w", err)
	}
	if res.ExceptionDetails != nil || res.Result == nil {
		return nil, fmt.Errorf("the raw reader's read threw: %+v", res.ExceptionDetails)
	}
	var text string
	if jsonv2.Unmarshal(res.Result.Value, &text) != nil {
		return nil, fmt.Errorf("the raw reader's read returned no JSON text")
	}
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(text), &list); err != nil {
		return nil, fmt.Errorf("the raw reader's read: %w", err)
	}
	names := make([]string, len(list.Tools))
	for i, t := range list.Tools {
		names[i] = t.Name
	}
	return names, nil
}
