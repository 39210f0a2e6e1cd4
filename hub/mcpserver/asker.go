package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// An Asker runs page tool calls for callers that are not MCP sessions of
// this process (the relay's browser side), with the same person-in-the-loop
// rules as a local client's calls (hitl.go): a page dialog during a call
// becomes a multi round-trip input request in the call's result, and the
// caller's retry, carrying the answer and the signed request state, gives
// it to the page. A caller that cannot be asked gets a --dialogs policy.
type Asker struct {
	h *hitl
}

// NewAsker returns an Asker whose calls run with call (hub.Hub.Call).
// callTimeout is the calls' --call-timeout: how long a finished call's
// result, or an unanswered question's call, is kept for a retry.
func NewAsker(call func(ctx context.Context, name string, args json.RawMessage) core.Outcome, callTimeout time.Duration) *Asker {
	if callTimeout <= 0 {
		callTimeout = 30 * time.Second
	}
	return &Asker{h: newHITL(call, callTimeout, 0)}
}

// AskedCall is one tools/call for an Asker: a first call, or a retry that
// carries the answer to the question of the call's last result.
type AskedCall struct {
	// Name and Args are the routed tool and its input.
	Name string
	Args json.RawMessage
	// Caller names who makes the call; only the same caller may answer
	// its questions (the relay connection).
	Caller string
	// Elicit says the caller can be asked: a dialog becomes an input
	// request. Otherwise Dialogs decides, as --dialogs does for a local
	// client without elicitation (default DialogsFail).
	Elicit  bool
	Dialogs DialogPolicy
	// RequestState and InputResponses come with a retry: the state of the
	// result that asked, and the answer under the key it asked with.
	RequestState   string
	InputResponses mcp.InputResponseMap
}

// Call runs c. The result is the tool's, or a question (InputRequests with
// one entry "dialog", and RequestState) to answer by calling again. It
// returns when the call ends, a question comes, or ctx ends; a caller that
// never answers holds the page at most until the call's timeout, since the
// dialog is then dismissed.
func (a *Asker) Call(ctx context.Context, c AskedCall) *mcp.CallToolResult {
	h := a.h
	cr := clientRequest{state: c.RequestState, answers: c.InputResponses}
	var o outcome
	var err error
	switch {
	case c.RequestState != "":
		o, err = h.retry(ctx, cr, c.Name, c.Caller)
	case !c.Elicit:
		policy := c.Dialogs
		if policy == "" {
			policy = DialogsFail
		}
		return h.runNow(ctx, c.Name, c.Args, policy)
	default:
		pc := h.newPending(c.Name, c.Args, true, DialogsFail, c.Caller)
		h.start(pc)
		o, err = h.wait(ctx, cr, pc)
	}
	if je := (*jsonrpc.Error)(nil); errors.As(err, &je) {
		return errResult("%s", je.Message)
	}
	if err != nil {
		return errResult("%s: the caller went away (%v)", c.Name, err)
	}
	res, err := o.toolResult()
	if err != nil {
		return errResult("%s: %v", c.Name, err)
	}
	return res
}

// CallTimeout is the server's --call-timeout, for an Asker over the same
// hub.
func (s *Server) CallTimeout() time.Duration { return s.opts.CallTimeout }

// CanElicit says whether the client of ss declared elicitation.
func CanElicit(ss *mcp.ServerSession) bool { return canElicit(ss) }
