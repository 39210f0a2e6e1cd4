package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file relays what an MCP-B page server asks of the client while it
// serves a client's tools/call, prompts/get or resources/read: its
// elicitation/create, sampling/createMessage and roots/list requests become
// input requests of the client's request (multi round-trip results for a
// 2026-07-28 client; go-sdk turns them into server requests for older
// ones), and its notifications/message go to that client. The page session
// declares elicitation, sampling and roots when it starts, and every relayed
// request carries the calling client's own capabilities in
// _meta["io.modelcontextprotocol/clientCapabilities"], so the page can ask
// only what that client can answer; a question the client cannot answer
// ends its request with -32021.
//
// A page server's session is shared by every client of the process, and
// MCP-B transports do not say which request a server's request belongs to.
// A question is therefore relayed only when one relayed request can have
// asked it: the only one in flight on the page's session, or the only one
// of several whose client is not being asked already; otherwise the page
// gets an error and no client is asked (a question must never reach
// another client). See docs/decisions/2026-11-28-page-questions.md.

// Bounds of the questions of one page session.
const (
	// maxPageQuestions bounds the questions one page session may have
	// waiting; more are refused at once.
	maxPageQuestions = 8
	// defaultGather is Options.QuestionGather's default: a page asks
	// several questions at once by sending them together, and they reach
	// the hub within a few milliseconds of each other.
	defaultGather = 30 * time.Millisecond
	// inputKeyMeta is the _meta key under which a page may name its
	// question (the key of the client's inputRequests and inputResponses).
	inputKeyMeta = "webmcp-cdp/inputKey"
	// capsMeta is the _meta key of the client's capabilities (2026-07-28).
	capsMeta = "io.modelcontextprotocol/clientCapabilities"
	// maxQuestionSync bounds the wait for the page's answer to the ping
	// that closes a round of questions (questionsArrived); a page that
	// does not answer it has its round closed by the gather alone.
	maxQuestionSync = time.Second
)

// validInputKey is what a page's own question key may look like.
var validInputKey = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// pageQuestion is one question of a page server to the client.
type pageQuestion struct {
	key    string
	req    mcp.InputRequest
	answer chan questionAnswer // capacity 1
	// sync pings the page server's session and returns once the answer is
	// read: everything the page sent before the ping has been read then.
	// nil: no session to ping.
	sync func(context.Context) error
}

// questionAnswer is the client's answer (a JSON result), or why there is
// none (a JSON-RPC error for the page server).
type questionAnswer struct {
	res json.RawMessage
	err *jsonrpc.Error
}

type relayKey struct{}

// withRelay returns a context whose page server requests relay their
// questions to pc's client.
func withRelay(ctx context.Context, pc *pendingCall) context.Context {
	return context.WithValue(ctx, relayKey{}, pc)
}

// relayFrom returns the pending request of ctx, or nil.
func relayFrom(ctx context.Context) *pendingCall {
	pc, _ := ctx.Value(relayKey{}).(*pendingCall)
	return pc
}

// offer puts q to the client of pc without waiting: a question the
// request already answered (by its key) gets that answer, any other goes
// into pc.questions, where the request's wait takes it. It is called as
// the page's messages are read, in their order, so that a question is
// with its request before anything the page sent after it is read
// (questionsArrived relies on it). ok is false when pc holds too many
// questions already.
func (pc *pendingCall) offer(q *pageQuestion) (early *questionAnswer, ok bool) {
	pc.mu.Lock()
	if r, found := pc.early[q.key]; found && r != nil {
		delete(pc.early, q.key)
		pc.mu.Unlock()
		a := encodeAnswer(r)
		return &a, true
	}
	pc.mu.Unlock()
	select {
	case pc.questions <- q:
		return nil, true
	default:
		return nil, false
	}
}

// await waits for the client's answer to q, offered to pc.
func (pc *pendingCall) await(ctx context.Context, q *pageQuestion) questionAnswer {
	select {
	case a := <-q.answer:
		return a
	case <-ctx.Done():
		return questionAnswer{err: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the request this question belongs to is over"}}
	}
}

func encodeAnswer(r mcp.InputResponse) questionAnswer {
	raw, err := json.Marshal(r)
	if err != nil {
		return questionAnswer{err: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client's answer could not be encoded: " + err.Error()}}
	}
	return questionAnswer{res: raw}
}

// missingCapability names the capability caps lacks for req, or "".
func missingCapability(caps *mcp.ClientCapabilities, req mcp.InputRequest) string {
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	switch p := req.(type) {
	case *mcp.ElicitParams:
		if caps.Elicitation == nil {
			return "elicitation"
		}
		if p.Mode == "url" && caps.Elicitation.URL == nil {
			return "elicitation.url"
		}
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		if caps.Sampling == nil {
			return "sampling"
		}
	case *mcp.ListRootsParams:
		if caps.RootsV2 == nil {
			return "roots"
		}
	}
	return ""
}

// methodOf names the MCP method of an input request.
func methodOf(req mcp.InputRequest) string {
	switch req.(type) {
	case *mcp.ElicitParams:
		return "elicitation/create"
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		return "sampling/createMessage"
	case *mcp.ListRootsParams:
		return "roots/list"
	}
	return fmt.Sprintf("%T", req)
}

func mustJSON(v any) json.RawMessage {
	raw, _ := json.Marshal(v)
	return raw
}

// pageRelays are the relayed requests in flight on one page session.
type pageRelays struct {
	mu   sync.Mutex
	m    map[*pendingCall]int
	next int // numbers the questions without a key of their own
	// waiting counts the questions waiting for an answer.
	waiting int
	// sync pings the page session (pageQuestion.sync); set once the
	// session has started.
	sync func(context.Context) error
}

// setSync sets the ping of the page session.
func (r *pageRelays) setSync(f func(context.Context) error) {
	r.mu.Lock()
	r.sync = f
	r.mu.Unlock()
}

// enter records that pc's request is in flight on the session until leave.
func (r *pageRelays) enter(pc *pendingCall) (leave func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[*pendingCall]int)
	}
	r.m[pc]++
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.m[pc]--; r.m[pc] <= 0 {
			delete(r.m, pc)
		}
	}
}

// only returns the relayed request a page server's question belongs to:
// the one in flight, or of several the one not waiting for its client's
// answers (a page asks a request's questions together, and waits for
// their answers before it asks again). Otherwise it returns nil and how
// many are in flight.
func (r *pageRelays) only() (*pendingCall, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var found *pendingCall
	running := 0
	for pc := range r.m {
		if len(r.m) == 1 {
			return pc, 1
		}
		if !pc.answering() {
			found = pc
			running++
		}
	}
	if running == 1 {
		return found, len(r.m)
	}
	return nil, len(r.m)
}

// answering says whether pc's client is being asked something now.
func (pc *pendingCall) answering() bool {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.asked != nil || pc.asking != nil || pc.confirming
}

// relayMeta returns the _meta of a request relayed to the page for the
// client request of ctx (its capabilities), and records the request as in
// flight until leave; without a relayed request in ctx, nil.
func (p *pageSession) relayMeta(ctx context.Context) (meta mcp.Meta, leave func()) {
	pc := relayFrom(ctx)
	if pc == nil {
		return nil, func() {}
	}
	pc.mu.Lock()
	caps := pc.caps
	pc.mu.Unlock()
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	return mcp.Meta{capsMeta: caps}, p.relays.enter(pc)
}

// isPageQuestion says whether a page server's request is a question for
// the client.
func isPageQuestion(req *jsonrpc.Request) bool {
	if !req.IsCall() {
		return false
	}
	switch req.Method {
	case "elicitation/create", "sampling/createMessage", "roots/list":
		return true
	}
	return false
}

// question decodes a page server's question and gives it its key: the
// page's own (_meta "webmcp-cdp/inputKey") or a number.
func (r *pageRelays) question(req *jsonrpc.Request) (*pageQuestion, error) {
	var ir mcp.InputRequest
	var meta mcp.Meta
	params := req.Params
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	switch req.Method {
	case "elicitation/create":
		p := &mcp.ElicitParams{}
		if err := json.Unmarshal(params, p); err != nil {
			return nil, err
		}
		meta, ir = p.Meta, p
	case "sampling/createMessage":
		p := &mcp.CreateMessageParams{}
		if err := json.Unmarshal(params, p); err != nil {
			w := &mcp.CreateMessageWithToolsParams{}
			if err := json.Unmarshal(params, w); err != nil {
				return nil, err
			}
			meta, ir = w.Meta, w
			break
		}
		meta, ir = p.Meta, p
	case "roots/list":
		p := &mcp.ListRootsParams{}
		if err := json.Unmarshal(params, p); err != nil {
			return nil, err
		}
		meta, ir = p.Meta, p
	}
	key, _ := meta[inputKeyMeta].(string)
	delete(meta, inputKeyMeta)
	if !validInputKey.MatchString(key) {
		r.mu.Lock()
		r.next++
		key = fmt.Sprintf("%s-%d", kindOf(req.Method), r.next)
		r.mu.Unlock()
	}
	return &pageQuestion{key: key, req: ir, answer: make(chan questionAnswer, 1)}, nil
}

func kindOf(method string) string {
	switch method {
	case "elicitation/create":
		return "elicitation"
	case "sampling/createMessage":
		return "sampling"
	}
	return "roots"
}

// answerQuestion relays a page server's question to the client of the one
// relayed request in flight, and writes the answer back to the page. It is
// called as the page's messages are read, in their order: the question is
// with its request when it returns (offer); the wait for the answer, and
// every reply to the page, run in a goroutine of their own.
func (t *pageTransport) answerQuestion(req *jsonrpc.Request) {
	r := t.relays
	reply := func(ctx context.Context, a questionAnswer) {
		resp := &jsonrpc.Response{ID: req.ID, Result: a.res}
		if a.err != nil {
			resp = &jsonrpc.Response{ID: req.ID, Error: a.err}
		}
		if data, err := jsonrpc.EncodeMessage(resp); err == nil {
			t.conn.Send(ctx, data, false)
		}
	}
	fail := func(format string, args ...any) {
		go reply(context.Background(), questionAnswer{err: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf(format, args...)}})
	}
	pc, n := r.only()
	switch {
	case n == 0:
		fail("webmcp-cdp passes %s to a client only during a tools/call, prompts/get or resources/read of a client that declared elicitation or sampling", req.Method)
		return
	case pc == nil:
		fail("%d client requests are in flight on this page server and more than one could be asking, and the MCP-B transport does not say which one %s belongs to; it is asked of no client", n, req.Method)
		return
	}
	r.mu.Lock()
	full := r.waiting >= maxPageQuestions
	if !full {
		r.waiting++
	}
	sync := r.sync
	r.mu.Unlock()
	if full {
		fail("more than %d questions wait for the client", maxPageQuestions)
		return
	}
	done := func() {
		r.mu.Lock()
		r.waiting--
		r.mu.Unlock()
	}
	q, err := r.question(req)
	if err != nil {
		done()
		go reply(context.Background(), questionAnswer{err: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s: %v", req.Method, err)}})
		return
	}
	q.sync = sync
	early, ok := pc.offer(q)
	switch {
	case !ok:
		done()
		fail("more than %d questions wait for the client", maxPageQuestions)
		return
	case early != nil:
		done()
		go reply(pc.runCtx, *early)
		return
	}
	go func() {
		defer done()
		reply(pc.runCtx, pc.await(pc.runCtx, q))
	}()
}

// passLog passes a page server's notifications/message on to the client
// of the one relayed request in flight (else it is dropped).
func (t *pageTransport) passLog(ctx context.Context, req *jsonrpc.Request) {
	pc, _ := t.relays.only()
	if pc == nil {
		return
	}
	var m mcp.LoggingMessageParams
	if json.Unmarshal(req.Params, &m) != nil || m.Level == "" {
		return
	}
	pc.progress.log(ctx, &m)
}

// canAsk says whether the client of ss can be asked a page server's
// questions (elicitation or sampling).
func canAsk(ss *mcp.ServerSession) bool { return canAskWith(clientCaps(ss)) }

// canAskWith says whether a client of capabilities caps can be asked a
// page server's questions.
func canAskWith(caps *mcp.ClientCapabilities) bool {
	return caps != nil && (caps.Elicitation != nil || caps.Sampling != nil)
}

// relayed runs a page server's prompts/get or resources/read (run) for the
// client request cr as a pending request, so the page can ask the client.
func (s *Server) relayed(ctx context.Context, cr clientRequest, name string, run func(ctx context.Context) outcome) (outcome, error) {
	h := s.hitl
	if cr.state != "" {
		o, err := h.retry(ctx, cr, name, cr.owner)
		o, err = h.untilDone(ctx, cr, name, o, err)
		if res, ok := o.res.(*mcp.CallToolResult); ok && err == nil {
			// retry's own refusal (another request waits already).
			return outcome{}, fmt.Errorf("%s", resultText(res))
		}
		return o, err
	}
	pc := h.newPending(name, nil, false, s.opts.Dialogs, cr.owner)
	pc.run = func(ctx context.Context) outcome {
		// A page that never answers holds the request no longer than a
		// tool call may take.
		ctx, cancel := context.WithTimeout(ctx, h.timeout)
		defer cancel()
		return run(ctx)
	}
	pc.caps, pc.early = cr.caps, cr.answers
	pc.progress.target(cr.ctx, cr.session, cr.token)
	h.start(pc)
	o, err := h.wait(ctx, cr, pc)
	return h.untilDone(ctx, cr, name, o, err)
}

// resultText is the text of a result made by errResult.
func resultText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return "the request failed"
}

// askable makes a page server's prompts/get or resources/read (get) for
// the client request cr: through the relay, so that the page can ask the
// client, when the client can be asked or the request is a retry; else at
// once. A non-nil ask holds the questions the client must answer first.
func askable[R mcp.Result](s *Server, cr clientRequest, name string, get func(context.Context) (R, error)) (res R, ask *outcome, err error) {
	if !canAskWith(cr.caps) && cr.state == "" {
		res, err = get(cr.ctx)
		return res, nil, err
	}
	o, err := s.relayed(cr.ctx, cr, name, func(ctx context.Context) outcome {
		res, err := get(ctx)
		return outcome{res: res, err: err}
	})
	if err == nil {
		err = o.err
	}
	switch {
	case err != nil:
		return res, nil, err
	case o.asks != nil:
		return res, &o, nil
	}
	res, _ = o.res.(R)
	return res, nil, nil
}
