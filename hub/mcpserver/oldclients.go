package mcpserver

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file asks a client of a revision before 2026-07-28 (no multi round
// trip results) the questions of a pending request itself, as server
// requests, round after round. go-sdk's server does the same for such a
// client, but only for one round: a page that asks again after the first
// answers (a second dialog, a page server's next question) would hand the
// old client an input-required result it cannot read.

// asksOldClient says whether ss's client predates multi round trip results.
func asksOldClient(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion < "2026-07-28"
}

// untilDone answers o's questions through the client of cr as server
// requests, and resumes the pending request with the answers, until it
// ends. It returns o as it is for a client of 2026-07-28 or later.
func (h *hitl) untilDone(ctx context.Context, cr clientRequest, name string, o outcome, err error) (outcome, error) {
	for err == nil && o.asks != nil && asksOldClient(cr.session) {
		var answers mcp.InputResponseMap
		answers, err = askServerRequests(ctx, cr.session, o.asks)
		if err != nil {
			// The page's request ends: nobody will answer it.
			if pc, ok := h.lookup(o.state, cr.owner); ok {
				pc.cancel()
				h.remove(pc.id)
			}
			return outcome{}, fmt.Errorf("asking the client: %w", err)
		}
		next := cr
		next.state, next.answers = o.state, answers
		o, err = h.retry(ctx, next, name, cr.owner)
	}
	return o, err
}

// askServerRequests sends each question to the client of ss, at once, and
// returns the answers by key.
func askServerRequests(ctx context.Context, ss *mcp.ServerSession, asks mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	var first error
	answers := make(mcp.InputResponseMap, len(asks))
	for key, req := range asks {
		wg.Go(func() {
			var r mcp.InputResponse
			var err error
			switch p := req.(type) {
			case *mcp.ElicitParams:
				r, err = ss.Elicit(ctx, p)
			case *mcp.CreateMessageParams:
				r, err = ss.CreateMessage(ctx, p)
			case *mcp.CreateMessageWithToolsParams:
				r, err = ss.CreateMessageWithTools(ctx, p)
			case *mcp.ListRootsParams:
				r, err = ss.ListRoots(ctx, p)
			default:
				err = fmt.Errorf("an input request of type %T", req)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = fmt.Errorf("%s: %w", key, err)
				cancel()
			}
			answers[key] = r
		})
	}
	wg.Wait()
	return answers, first
}
