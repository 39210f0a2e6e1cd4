package relay

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/hub/relay/proxy"
)

// This file carries a page's questions (dialogs, and so the confirm() of
// requestUserInteraction) across the relay, both ends
// (docs/decisions/2026-11-26-relay-elicitation.md). The browser stays
// passive: the connect side says in tools/call's _meta that its client can
// be asked; a dialog then ends the tools/call early with a result that asks
// (inputRequests, requestState: MCP's multi round-trip result), and the
// connect side calls again with the answer, which goes to the page.

// maxQuestionsPerCall bounds the questions one call may ask the connect
// side's client, one after the other.
const maxQuestionsPerCall = 32

// askedCall checks the params of a tools/call for the Asker. asked is false
// for a caller that said nothing of dialogs (an older connect side, or
// another client of the seed's protocol): its calls run as they always
// did.
func askedCall(conn string, p proxy.ToolsCallParams) (c mcpserver.AskedCall, asked bool, err error) {
	c = mcpserver.AskedCall{Name: p.Name, Args: p.Arguments, Caller: conn}
	dialogs := ""
	if p.Meta != nil {
		dialogs = p.Meta.Dialogs
	}
	switch dialogs {
	case proxy.DialogsAsk:
		c.Elicit = true
	case "":
	default:
		pol, perr := mcpserver.ParseDialogPolicy(dialogs)
		if perr != nil {
			return c, false, proxy.Errorf(proxy.CodeInvalidParams, "Invalid params: _meta[%q] is %q: use %q or a --dialogs policy (accept, dismiss, fail)", proxy.DialogsMetaKey, dialogs, proxy.DialogsAsk)
		}
		c.Dialogs = pol
	}
	switch {
	case len(p.RequestState) > proxy.MaxRequestState:
		return c, false, proxy.Errorf(proxy.CodeInvalidParams, "Invalid params: requestState has %d bytes, over the limit of %d", len(p.RequestState), proxy.MaxRequestState)
	case len(p.InputResponses) > proxy.MaxAnswerBytes:
		return c, false, proxy.Errorf(proxy.CodeInvalidParams, "Invalid params: inputResponses has %d bytes, over the limit of %d", len(p.InputResponses), proxy.MaxAnswerBytes)
	case len(p.InputResponses) > 0 && p.RequestState == "":
		return c, false, proxy.Errorf(proxy.CodeInvalidParams, "Invalid params: inputResponses needs the requestState of the result that asked")
	case p.RequestState == "":
		return c, dialogs != "", nil
	}
	c.RequestState = p.RequestState
	if len(p.InputResponses) > 0 && string(p.InputResponses) != "null" {
		var m mcp.InputResponseMap
		if err := json.Unmarshal(p.InputResponses, &m); err != nil {
			return c, false, proxy.Errorf(proxy.CodeInvalidParams, "Invalid params: inputResponses: %v", err)
		}
		for k, v := range m {
			if _, ok := v.(*mcp.ElicitResult); k != proxy.QuestionKey || !ok {
				return c, false, proxy.Errorf(proxy.CodeInvalidParams, "Invalid params: inputResponses holds %q; only %q, an elicitation result, answers this browser's question", k, proxy.QuestionKey)
			}
		}
		c.InputResponses = m
	}
	return c, true, nil
}

// question checks the question a browser's tools/call result asks, and
// returns it rebuilt from the checked fields only.
func question(res *mcp.CallToolResult) (*mcp.ElicitParams, error) {
	if len(res.InputRequests) != 1 {
		return nil, fmt.Errorf("the result asks %d questions; one at a time is allowed", len(res.InputRequests))
	}
	if n := len(res.RequestState); n == 0 || n > proxy.MaxRequestState {
		return nil, fmt.Errorf("the question's requestState has %d bytes; 1 to %d are allowed", n, proxy.MaxRequestState)
	}
	if len(res.Content) > 0 || res.StructuredContent != nil {
		return nil, fmt.Errorf("the result both asks a question and has content")
	}
	ep, ok := res.InputRequests[proxy.QuestionKey].(*mcp.ElicitParams)
	if !ok {
		return nil, fmt.Errorf("the question is not an elicitation under %q", proxy.QuestionKey)
	}
	if (ep.Mode != "" && ep.Mode != "form") || ep.URL != "" {
		return nil, fmt.Errorf("the question is a %q elicitation; only forms are passed on", ep.Mode)
	}
	if len(ep.Message) > proxy.MaxQuestionBytes {
		return nil, fmt.Errorf("the question has %d bytes, over the limit of %d", len(ep.Message), proxy.MaxQuestionBytes)
	}
	schema, err := json.Marshal(ep.RequestedSchema)
	if err != nil || len(schema) > proxy.MaxQuestionSchemaBytes {
		return nil, fmt.Errorf("the question's schema has %d bytes (limit %d) or does not encode", len(schema), proxy.MaxQuestionSchemaBytes)
	}
	var obj struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(schema, &obj) != nil || obj.Type != "object" {
		return nil, fmt.Errorf("the question's schema is not an object schema")
	}
	return &mcp.ElicitParams{Message: ep.Message, RequestedSchema: json.RawMessage(schema)}, nil
}

// multiRoundTrip says whether the client of ss takes input requests in
// results (MCP 2026-07-28); older clients are asked with elicitation/create.
func multiRoundTrip(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= "2026-07-28"
}

// dialogsFor says who answers the page's dialogs during a call of ss's
// client: the client when it has elicitation, else the --dialogs policy.
func (r *Remote) dialogsFor(ss *mcp.ServerSession) string {
	if ss != nil && mcpserver.CanElicit(ss) {
		return proxy.DialogsAsk
	}
	return string(r.opts.Dialogs)
}

// callAsking calls a routed tool of the browser for the client of req, and
// carries the page's questions to that client: a 2026-07-28 client gets
// them as input requests in the result and calls again (its retry carries
// the browser's requestState); an older client with elicitation is asked
// with elicitation/create on its session, and the answer goes back at once.
func (r *Remote) callAsking(ctx context.Context, c *Client, req *mcp.CallToolRequest, name string, args json.RawMessage) *mcp.CallToolResult {
	var ss *mcp.ServerSession
	if req != nil {
		ss = req.Session
	}
	p := toolsCallParams{Name: name, Arguments: args, Meta: &proxy.ToolsCallMeta{Dialogs: r.dialogsFor(ss)}}
	if req != nil && req.Params.RequestState != "" {
		p.RequestState = req.Params.RequestState
		raw, err := answerJSON(req.Params.InputResponses[proxy.QuestionKey])
		if err != nil {
			return errorResult("%s: the answer cannot be passed on: %v", name, err)
		}
		p.InputResponses = raw
	}
	for range maxQuestionsPerCall {
		var res mcp.CallToolResult
		if err := c.Call(ctx, MethodToolsCall, p, &res); err != nil {
			return errorResult("%s failed across the relay: %v", name, err)
		}
		if res.InputRequests == nil {
			return &res
		}
		q, err := question(&res)
		switch {
		case err != nil:
			return errorResult("%s: the browser asked something that is not passed on to you: %v", name, err)
		case p.Meta.Dialogs != proxy.DialogsAsk:
			return errorResult("%s: the browser asked a question although this client cannot be asked", name)
		case multiRoundTrip(ss):
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{proxy.QuestionKey: q}, RequestState: res.RequestState}
		}
		ans, err := ss.Elicit(ctx, q)
		if ctx.Err() != nil {
			return errorResult("%s: the call was cancelled while its page waited for an answer", name)
		}
		if err != nil {
			r.log.Warn("asking the client a page's question", "tool", name, "err", err)
			ans = &mcp.ElicitResult{Action: "cancel"}
		}
		raw, err := answerJSON(ans)
		if err != nil {
			return errorResult("%s: the answer cannot be passed on: %v", name, err)
		}
		p.RequestState, p.InputResponses = res.RequestState, raw
	}
	return errorResult("%s: the page asked more than %d questions in one call; the rest were not passed on", name, maxQuestionsPerCall)
}

// answerJSON encodes an answer as a retry's inputResponses (null without
// one: the page's dialog is then dismissed).
func answerJSON(ans mcp.InputResponse) (json.RawMessage, error) {
	er, ok := ans.(*mcp.ElicitResult)
	if !ok || er == nil {
		return nil, nil
	}
	raw, err := json.Marshal(map[string]*mcp.ElicitResult{proxy.QuestionKey: er})
	if err != nil {
		return nil, err
	}
	if len(raw) > proxy.MaxAnswerBytes {
		return nil, fmt.Errorf("it has %d bytes, over the limit of %d", len(raw), proxy.MaxAnswerBytes)
	}
	return raw, nil
}
