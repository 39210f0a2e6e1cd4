package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Invoke runs a tool in a document and waits for its result. It fails
// with ErrNavigated when the document went away; a tool that throws is a
// Result with Err. It implements hub.Browser.
func (b *Browser) Invoke(ctx context.Context, docKey, tool string, input json.RawMessage) (core.Result, error) {
	if strings.Contains(docKey, "/native/") {
		return b.invokeNative(ctx, docKey, tool, input)
	}
	b.mu.Lock()
	d := b.docs[docKey]
	var bridge runtime.RemoteObjectID
	alive := false
	if d != nil {
		bridge, alive = d.bridge, d.alive
	}
	b.mu.Unlock()
	if !alive || bridge == "" || bridge == "pending" {
		return core.Result{}, ErrNavigated
	}
	cctx, end := b.startCall(ctx, d.t)
	defer end()
	callID := strconv.FormatInt(b.callSeq.Add(1), 10)
	var res bridgeAnswer
	err := d.t.sess.Call(cctx, runtime.CommandCallFunctionOn, invokeParamsTimed(bridge, tool, input, callID, b.opts.Limits.MaxResult, b.opts.PageTimes), &res)
	out := res.Result.Value
	switch {
	case err != nil:
	case res.ExceptionDetails != nil:
		err = fmt.Errorf("the page script failed: %s", exceptionText(res.ExceptionDetails))
	case out == nil:
		err = errors.New("the page bridge returned no answer")
	}
	if err != nil {
		if crashed(cctx) && ctx.Err() == nil {
			return core.Result{}, core.ErrPageCrashed
		}
		if ctx.Err() != nil {
			// Abort the page's call so it frees its slot; nobody waits for it.
			d.t.sess.Send(runtime.CommandCallFunctionOn, runtime.CallFunctionOnParams{
				FunctionDeclaration: "function(c,r){this.cancel(c,r)}",
				ObjectID:            bridge,
				Arguments:           []*runtime.CallArgument{{Value: jsonString(callID)}, {Value: jsonString(context.Cause(ctx).Error())}},
			})
			return core.Result{}, ctx.Err()
		}
		return core.Result{}, b.callError(d, err)
	}
	r, err := parseAnswer(*out)
	if err != nil {
		return core.Result{}, err
	}
	if r.Kind == kindNavigated { // a form that navigates (navresult.go)
		return b.navResult(cctx, d)
	}
	return r, nil
}

// bridgeAnswer is CDP's answer to a bridge call, decoded in one pass: the
// bridge resolves with one string (parseAnswer), which comes back by value
// and is unescaped once; the tool's value in it is never parsed here.
type bridgeAnswer struct {
	Result struct {
		Value *string `json:"value"`
	} `json:"result"`
	ExceptionDetails *runtime.ExceptionDetails `json:"exceptionDetails"`
}

// parseAnswer reads the bridge's answer to a call (answerText in
// polyfill/bridge.js): "KIND:VALUE", "KIND/LENGTH:VALUE" for a value cut
// from LENGTH characters, or "error:MESSAGE". The page script writes it,
// but anything else is an error, not a guess.
func parseAnswer(s string) (core.Result, error) {
	var took time.Duration
	timed := strings.HasPrefix(s, "@")
	if timed { // "@MICROSECONDS:" of a timed call
		us, rest, ok := strings.Cut(s[1:], ":")
		n, err := strconv.ParseInt(us, 10, 64)
		if !ok || err != nil || n < 0 {
			return core.Result{}, fmt.Errorf("the page bridge answered with a bad time %.40q: reload the page", s)
		}
		took, s = time.Duration(n)*time.Microsecond, rest
	}
	r, err := parseUntimed(s)
	r.PageTook, r.PageTimed = took, timed
	return r, err
}

// parseUntimed is parseAnswer after the time.
func parseUntimed(s string) (core.Result, error) {
	head, value, ok := strings.Cut(s, ":")
	if !ok {
		return core.Result{}, fmt.Errorf("the page bridge answered in an unknown shape (%.40q): reload the page", s)
	}
	if head == "error" {
		return core.Result{Err: value}, nil
	}
	kind, length, cut := strings.Cut(head, "/")
	r := core.Result{Kind: core.ResultKind(kind), Value: value}
	switch r.Kind {
	case core.KindString, core.KindJSON, core.KindUndefined, kindNavigated:
	default:
		return core.Result{}, fmt.Errorf("the page bridge answered with an unknown kind %.40q: reload the page", kind)
	}
	if cut {
		n, err := strconv.Atoi(length)
		if err != nil || n <= 0 {
			return core.Result{}, fmt.Errorf("the page bridge answered with a bad length %.40q: reload the page", length)
		}
		r.Truncated = n
	}
	return r, nil
}

// invokeParams renders the Runtime.callFunctionOn of a bridge call without
// reflection: the tool's name, its input (JSON text, passed as a string),
// the call id and the result limit, awaited and returned by value.
func invokeParams(bridge runtime.RemoteObjectID, tool string, input []byte, callID string, maxResult int) jsonv2.Value {
	return invokeParamsTimed(bridge, tool, input, callID, maxResult, false)
}

// invokeParamsTimed is invokeParams that, when timed, asks the page for the
// time execute took (parseAnswer reads it).
func invokeParamsTimed(bridge runtime.RemoteObjectID, tool string, input []byte, callID string, maxResult int, timed bool) jsonv2.Value {
	b := make([]byte, 0, 192+len(bridge)+len(tool)+len(input)+len(input)/8)
	if timed {
		b = append(b, `{"functionDeclaration":"function(n,i,c,m){return this.call(n,i,c,m,true)}","objectId":`...)
	} else {
		b = append(b, `{"functionDeclaration":"function(n,i,c,m){return this.call(n,i,c,m)}","objectId":`...)
	}
	// AppendQuote replaces invalid UTF-8 with U+FFFD and says so; the text
	// stays valid JSON either way, as encoding/json would have made it.
	b, _ = jsontext.AppendQuote(b, string(bridge))
	b = append(b, `,"arguments":[{"value":`...)
	b, _ = jsontext.AppendQuote(b, tool)
	b = append(b, `},{"value":`...)
	b, _ = jsontext.AppendQuote(b, input)
	b = append(b, `},{"value":`...)
	b, _ = jsontext.AppendQuote(b, callID)
	b = append(b, `},{"value":`...)
	b = strconv.AppendInt(b, int64(maxResult), 10)
	return append(b, `}],"silent":true,"returnByValue":true,"awaitPromise":true}`...)
}

func jsonString(s string) jsonv2.Value {
	b, _ := json.Marshal(s)
	return b
}

// callError words the failure of a call whose document may have gone.
func (b *Browser) callError(d *docState, err error) error {
	if errors.Is(err, ErrTargetGone) || errors.Is(err, ErrClosed) {
		return err
	}
	b.mu.Lock()
	alive := d.alive
	b.mu.Unlock()
	msg := err.Error()
	// CDP's words for a document that went under a call: its execution
	// context was destroyed or cannot be found, the bridge object with it,
	// or the whole target navigated or closed (the session's own error,
	// which can come before the browser reports the document gone).
	if !alive || strings.Contains(msg, "context was destroyed") || strings.Contains(msg, "Cannot find context") ||
		strings.Contains(msg, "Could not find object") || strings.Contains(msg, "Inspected target navigated or closed") {
		return ErrNavigated
	}
	return err
}
