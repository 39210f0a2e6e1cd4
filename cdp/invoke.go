package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	cdpt "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"

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
	var out struct {
		OK        bool            `json:"ok"`
		Kind      core.ResultKind `json:"kind"`
		Value     string          `json:"value"`
		Truncated int             `json:"truncated"`
		Error     string          `json:"error"`
	}
	// The bridge resolves with a plain object that comes back by value: one
	// decode of CDP's answer, with the tool's value (a JSON string for a JSON
	// result) unescaped once and never parsed here.
	res, err := cdpt.Call(cctx, d.t.sess, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: "function(n,i,c,m){return this.call(n,i,c,m)}",
		ObjectID:            bridge,
		Arguments: []*runtime.CallArgument{
			{Value: jsonString(tool)}, {Value: jsonString(string(input))},
			{Value: jsonString(callID)}, {Value: jsonv2.Value(strconv.Itoa(b.opts.Limits.MaxResult))},
		},
		AwaitPromise:  ptr(true),
		ReturnByValue: ptr(true),
		Silent:        ptr(true),
	})
	switch {
	case err != nil:
	case res.ExceptionDetails != nil:
		err = fmt.Errorf("the page script failed: %s", exceptionText(res.ExceptionDetails))
	case res.Result == nil || json.Unmarshal(res.Result.Value, &out) != nil:
		err = errors.New("the page bridge returned no result object")
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
	if !out.OK {
		return core.Result{Err: out.Error}, nil
	}
	if out.Kind == kindNavigated { // a form that navigates (navresult.go)
		return b.navResult(cctx, d)
	}
	return core.Result{Kind: out.Kind, Value: out.Value, Truncated: out.Truncated}, nil
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
	if !alive || strings.Contains(msg, "context was destroyed") || strings.Contains(msg, "Cannot find context") || strings.Contains(msg, "Could not find object") {
		return ErrNavigated
	}
	return err
}
