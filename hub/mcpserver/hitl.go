package mcpserver

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// A pendingCall is a tool call that runs on while the client is asked
// something (a page dialog, a confirmation). The client's answer comes in a
// retry of tools/call that carries RequestState (MCP multi round-trip
// results; go-sdk turns them into elicitation requests for older clients).
type pendingCall struct {
	id      string
	name    string
	args    json.RawMessage
	done    chan outcome
	dialogs chan dialogAsk
	cancel  context.CancelFunc
	runCtx  context.Context
	// run makes the request (a page tool's call by default; a page
	// server's prompts/get or resources/read, pagerelay.go).
	run func(ctx context.Context) outcome
	// questions are a page server's questions to the client (pagerelay.go),
	// put there as the page's messages are read (offer).
	questions chan *pageQuestion
	// progress takes the call's progress to the client's latest request.
	progress *progressSink

	// owner is who may answer the call's questions: "" for a local
	// client, the relay connection for a call through the relay.
	owner string

	mu     sync.Mutex
	asking *dialogAsk      // the dialog the client is being asked about
	asked  []*pageQuestion // the page server's questions being asked
	// caps are the client's capabilities as its latest request declared
	// them; early are the answers a request brought before being asked
	// (a client may answer a question it knows by its key).
	caps       *mcp.ClientCapabilities
	early      mcp.InputResponseMap
	confirming bool // waiting for the client's go-ahead
	started    bool
	waiting    bool   // a request waits for the call's result or next question
	failed     string // why the call must end as an error
	round      int    // numbers the questions (stateOf)
}

// outcome is where a pending request stands for the client: its result
// or error, or questions to answer first (asks, with the signed state).
type outcome struct {
	res   mcp.Result
	err   error
	asks  mcp.InputRequestMap
	state string
	// broken says res is an error the call ended with rather than the
	// tool's own (core.Outcome.Broken): a task reports it as failed.
	broken bool
}

// toolResult is o as a tools/call result.
func (o outcome) toolResult() (*mcp.CallToolResult, error) {
	if o.err != nil {
		return nil, o.err
	}
	if o.asks != nil {
		return &mcp.CallToolResult{InputRequests: o.asks, RequestState: o.state}, nil
	}
	res, _ := o.res.(*mcp.CallToolResult)
	if res == nil {
		return nil, fmt.Errorf("internal error: the call ended with a %T", o.res)
	}
	return res, nil
}

type dialogAsk struct {
	d      core.Dialog
	answer chan core.DialogAnswer
}

// callFunc runs a routed tool (hub.Hub.Call); every failure is in the
// outcome.
type callFunc func(ctx context.Context, name string, args json.RawMessage) core.Outcome

// hitl holds the calls waiting for a client's answer, and runs them.
type hitl struct {
	key     []byte
	call    callFunc
	timeout time.Duration // the calls' --call-timeout
	gather  time.Duration // Options.QuestionGather
	mu      sync.Mutex
	pending map[string]*pendingCall
}

func newHITL(call callFunc, timeout, gather time.Duration) *hitl {
	k := make([]byte, 32)
	rand.Read(k)
	if gather <= 0 {
		gather = defaultGather
	}
	return &hitl{key: k, call: call, timeout: timeout, gather: gather, pending: make(map[string]*pendingCall)}
}

// state signs a pending call's id: the client echoes it back, and an
// unauthenticated server must not trust an unsigned one.
func (h *hitl) state(id string) string {
	m := hmac.New(sha256.New, h.key)
	m.Write([]byte(id))
	return id + "." + hex.EncodeToString(m.Sum(nil))
}

// stateOf returns the state of pc's question now: its id and the number
// of the question, signed. Each question gets a new state, and only the
// latest one is taken back (an answer to an earlier question is stale).
func (h *hitl) stateOf(pc *pendingCall) string {
	pc.mu.Lock()
	pc.round++
	r := pc.round
	pc.mu.Unlock()
	return h.state(pc.id + "-" + strconv.Itoa(r))
}

// lookup returns the pending call a signed state names, when owner made
// it and the state is of its latest question: one caller cannot answer
// another's question, nor answer one twice.
func (h *hitl) lookup(state, owner string) (*pendingCall, bool) {
	signed, _, ok := strings.Cut(state, ".")
	if !ok || !hmac.Equal([]byte(h.state(signed)), []byte(state)) {
		return nil, false
	}
	id, round, _ := strings.Cut(signed, "-")
	h.mu.Lock()
	pc, ok := h.pending[id]
	h.mu.Unlock()
	if !ok || pc.owner != owner {
		return nil, false
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc, strconv.Itoa(pc.round) == round
}

func (h *hitl) add(pc *pendingCall) {
	h.mu.Lock()
	h.pending[pc.id] = pc
	h.mu.Unlock()
}

func (h *hitl) remove(id string) {
	h.mu.Lock()
	delete(h.pending, id)
	h.mu.Unlock()
}

func canElicit(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}

// needsConfirm says whether the policy asks before calling tool.
func (s *Server) needsConfirm(name string) (bool, string) {
	if s.opts.Confirm == "" || s.opts.Confirm == ConfirmNone {
		return false, ""
	}
	rt, ok := s.hub.Tool(name)
	if !ok {
		return false, ""
	}
	a := rt.Tool.Annotations
	consequential, _ := a["consequentialHint"].(bool)
	readOnly, _ := a["readOnlyHint"].(bool)
	switch {
	case consequential:
		return true, "it is marked consequential"
	case s.opts.Confirm == ConfirmWrites && !readOnly:
		return true, "it is not marked read-only"
	}
	return false, ""
}

// handleCall runs a routed tool for a client, asking the client (through
// multi round-trip input requests) to confirm it or to answer the page's
// dialogs when needed.
func (s *Server) handleCall(ctx context.Context, req *mcp.CallToolRequest, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	h := s.hitl
	cr := toolRequest(ctx, req)
	if st := req.Params.RequestState; st != "" {
		o, err := h.retry(ctx, cr, name, cr.owner)
		o, err = h.untilDone(ctx, cr, name, o, err)
		if err != nil {
			return nil, err
		}
		return o.toolResult()
	}
	pc, elicit := s.prepareCall(ctx, req, name, args, cr)
	if ask, why := s.needsConfirm(name); ask {
		if !elicit {
			return errResult("%s needs your confirmation first (%s; --confirm %s), but this client cannot be asked (it has no elicitation)", name, why, s.opts.Confirm), nil
		}
		pc.confirming = true
		h.add(pc)
		time.AfterFunc(h.timeout, func() { h.remove(pc.id) })
		return h.inputRequired(pc, "confirm", &mcp.ElicitParams{
			Message:         fmt.Sprintf("Allow the page tool %s to run with %s? (%s)", name, compact(args), why),
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		}), nil
	}
	h.start(pc)
	o, err := h.wait(ctx, cr, pc)
	o, err = h.untilDone(ctx, cr, name, o, err)
	if err != nil {
		return nil, err
	}
	return o.toolResult()
}

// prepareCall makes the pendingCall of a client's tools/call, not yet
// started, and says whether the client can be asked (elicitation).
func (s *Server) prepareCall(ctx context.Context, req *mcp.CallToolRequest, name string, args json.RawMessage, cr clientRequest) (*pendingCall, bool) {
	// The request's own capabilities: a 2026-07-28 client declares them
	// in each request.
	elicit := cr.caps != nil && cr.caps.Elicitation != nil
	pc := s.hitl.newPending(name, args, elicit, s.opts.Dialogs, cr.owner)
	if who := hub.Caller(ctx); who != "" { // runCtx is not the request's (oauth.go)
		pc.runCtx = hub.WithCaller(pc.runCtx, who)
	}
	if req != nil && req.Params != nil {
		// Nor is its trace: the call's spans go under the client's all the
		// same (tracectx.go).
		pc.runCtx = s.traceContext(pc.runCtx, req.Params.Meta)
	}
	pc.runCtx = s.hintContext(pc.runCtx, req)
	pc.caps, pc.early = cr.caps, cr.answers
	pc.progress.target(cr.ctx, cr.session, cr.token)
	return pc, elicit
}

// clientRequest is what a pending request needs of the client's request
// that waits for it now (the first, or a retry): where progress goes, the
// capabilities it declared, and the answers it carries.
type clientRequest struct {
	ctx     context.Context // the request's own (notifications go with it)
	session *mcp.ServerSession
	token   any // progress token, or nil
	caps    *mcp.ClientCapabilities
	state   string
	answers mcp.InputResponseMap
	// owner is who may answer the request's questions: the OAuth
	// principal that made it (hub.Caller), or "" without one.
	owner string
}

func toolRequest(ctx context.Context, req *mcp.CallToolRequest) clientRequest {
	return clientRequest{ctx: ctx, session: req.Session, token: req.Params.GetProgressToken(), caps: req.ClientCapabilities(),
		state: req.Params.RequestState, answers: req.Params.InputResponses, owner: hub.Caller(ctx)}
}

// clientCaps returns the capabilities the client of ss declared, or nil.
func clientCaps(ss *mcp.ServerSession) *mcp.ClientCapabilities {
	if ss == nil {
		return nil
	}
	if p := ss.InitializeParams(); p != nil {
		return p.Capabilities
	}
	return nil
}

// retry takes a retried request that carries the answer to a question
// (its requestState names the pending request), from owner.
func (h *hitl) retry(ctx context.Context, cr clientRequest, name, owner string) (outcome, error) {
	pc, o, err := h.claim(cr, name, owner)
	if pc == nil {
		return o, err
	}
	return h.resume(ctx, cr, pc)
}

// claim finds the pending request a retry's requestState names, from
// owner, and marks a request as waiting for it. When it returns no
// pendingCall, the outcome or error is the retry's answer.
func (h *hitl) claim(cr clientRequest, name, owner string) (*pendingCall, outcome, error) {
	pc, ok := h.lookup(cr.state, owner)
	if !ok {
		// A forged, altered or replayed state, or one whose call ended:
		// the request is invalid, not the tool's failure (MCP's MRTR).
		return nil, outcome{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
			"requestState names a call that is over or unknown (this server did not give it, or it was altered or already used); call %s again without requestState", name)}
	}
	if pc.name != name {
		return nil, outcome{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
			"requestState belongs to a call of %s, not %s; send it back with the call that asked", pc.name, name)}
	}
	pc.mu.Lock()
	busy := pc.waiting
	pc.waiting = true
	pc.mu.Unlock()
	if busy {
		return nil, outcome{res: errResult("another request already waits for this call of %s; this retry was ignored", pc.name)}, nil
	}
	return pc, outcome{}, nil
}

// runNow runs a call that cannot ask its client anything, in the caller's
// goroutine: a page dialog is handled by policy, and a caller that gives
// up aborts the page's call.
func (h *hitl) runNow(ctx context.Context, name string, args json.RawMessage, policy DialogPolicy) *mcp.CallToolResult {
	// No pendingCall: nothing here outlives the request or is asked for
	// later, so the call runs on ctx itself.
	var mu sync.Mutex
	failed := ""
	cctx := core.WithDialogFunc(ctx, byPolicy(policy, func(why string) {
		mu.Lock()
		failed = why
		mu.Unlock()
	}))
	res := CallToolResult(h.call(cctx, name, args))
	mu.Lock()
	defer mu.Unlock()
	if failed != "" {
		return errResult("%s: %s", name, failed)
	}
	return res
}

// byPolicy answers a page's dialog for a call whose client cannot be asked:
// accepted or dismissed as policy says, or (--dialogs fail) dismissed with
// fail told why the call must end as an error.
func byPolicy(policy DialogPolicy, fail func(why string)) core.DialogFunc {
	return func(_ context.Context, d core.Dialog) core.DialogAnswer {
		switch policy {
		case DialogsAccept:
			return core.DialogAnswer{Accept: true, Text: d.DefaultPrompt}
		case DialogsDismiss:
			return core.DialogAnswer{}
		}
		fail(fmt.Sprintf("the page opened a %s dialog (%q) that needed a person, and this client cannot be asked (no elicitation); it was dismissed (--dialogs fail)", d.Type, d.Message))
		return core.DialogAnswer{}
	}
}

// newPending prepares a call: a page dialog goes to the client when it can
// be asked (elicit), else policy decides.
func (h *hitl) newPending(name string, args json.RawMessage, elicit bool, policy DialogPolicy, owner string) *pendingCall {
	id := make([]byte, 12)
	rand.Read(id)
	pc := &pendingCall{
		id:        hex.EncodeToString(id),
		name:      name,
		args:      args,
		done:      make(chan outcome, 1),
		dialogs:   make(chan dialogAsk),
		questions: make(chan *pageQuestion, maxPageQuestions),
		progress:  newProgressSink(),
		owner:     owner,
	}
	pc.run = func(ctx context.Context) outcome {
		o := h.call(ctx, pc.name, pc.args)
		res := CallToolResult(o)
		pc.mu.Lock()
		if pc.failed != "" {
			res = errResult("%s: %s", pc.name, pc.failed)
		}
		pc.mu.Unlock()
		return outcome{res: res, broken: o.Broken}
	}
	cctx, cancel := context.WithCancel(withRelay(withProgress(context.Background(), pc.progress), pc))
	pc.cancel = cancel
	if !elicit {
		pc.runCtx = core.WithDialogFunc(cctx, byPolicy(policy, func(why string) {
			pc.mu.Lock()
			pc.failed = why
			pc.mu.Unlock()
		}))
		return pc
	}
	cctx = core.WithDialogFunc(cctx, func(ctx context.Context, d core.Dialog) core.DialogAnswer {
		ask := dialogAsk{d: d, answer: make(chan core.DialogAnswer, 1)}
		select {
		case pc.dialogs <- ask:
		case <-ctx.Done():
			return core.DialogAnswer{}
		}
		select {
		case a := <-ask.answer:
			return a
		case <-ctx.Done():
			return core.DialogAnswer{}
		}
	})
	pc.runCtx = cctx
	return pc
}

// start runs the call in the background: it outlives the tools/call that
// started it when the client must be asked something.
func (h *hitl) start(pc *pendingCall) {
	pc.mu.Lock()
	pc.started = true
	pc.mu.Unlock()
	go func() {
		pc.done <- pc.run(pc.runCtx)
		pc.cancel()
		// A client that never comes back for the result must not pin it.
		time.AfterFunc(h.timeout, func() { h.remove(pc.id) })
	}()
}

// resume takes the client's answer to what it was asked and waits on.
func (h *hitl) resume(ctx context.Context, cr clientRequest, pc *pendingCall) (outcome, error) {
	pc.progress.target(cr.ctx, cr.session, cr.token)
	pc.mu.Lock()
	confirming, asking, asked := pc.confirming, pc.asking, pc.asked
	pc.confirming, pc.asking, pc.asked = false, nil, nil
	pc.caps = cr.caps
	pc.mu.Unlock()
	switch {
	case confirming:
		r, _ := cr.answers["confirm"].(*mcp.ElicitResult)
		if r == nil || r.Action != "accept" {
			h.remove(pc.id)
			pc.cancel()
			return outcome{res: errResult("%s was not run: the user declined", pc.name)}, nil
		}
		h.start(pc)
	case asking != nil:
		r, _ := cr.answers["dialog"].(*mcp.ElicitResult)
		asking.answer <- dialogAnswer(asking.d, r)
	case asked != nil:
		if left := answerQuestions(asked, cr.answers); len(left) > 0 {
			// Some answers are missing: ask for those again (no request
			// waits for the call meanwhile).
			pc.mu.Lock()
			pc.waiting = false
			pc.mu.Unlock()
			return h.askQuestions(pc, left), nil
		}
	}
	return h.wait(ctx, cr, pc)
}

// dialogAnswer maps the client's answer onto the dialog's buttons.
func dialogAnswer(d core.Dialog, r *mcp.ElicitResult) core.DialogAnswer {
	if r == nil || r.Action != "accept" {
		return core.DialogAnswer{}
	}
	switch d.Type {
	case "prompt":
		text, _ := r.Content["text"].(string)
		return core.DialogAnswer{Accept: true, Text: text}
	case "confirm", "beforeunload":
		ok, _ := r.Content["confirm"].(bool)
		return core.DialogAnswer{Accept: ok}
	}
	return core.DialogAnswer{Accept: true}
}

// dialogElicit words a page dialog as a question for the client.
func dialogElicit(d core.Dialog) *mcp.ElicitParams {
	msg := fmt.Sprintf("The page %s asks: %s", d.URL, d.Message)
	var schema string
	switch d.Type {
	case "prompt":
		def, _ := json.Marshal(d.DefaultPrompt)
		schema = `{"type":"object","properties":{"text":{"type":"string","title":"Your answer","default":` + string(def) + `}},"required":["text"]}`
	case "confirm", "beforeunload":
		schema = `{"type":"object","properties":{"confirm":{"type":"boolean","title":"OK?","default":false}},"required":["confirm"]}`
	default:
		msg = fmt.Sprintf("The page %s says: %s", d.URL, d.Message)
		schema = `{"type":"object","properties":{}}`
	}
	return &mcp.ElicitParams{Message: msg, RequestedSchema: json.RawMessage(schema)}
}

// wait waits for the call's result or for a dialog to ask the client about,
// sending progress while it waits when the client asked for it. A client
// that cancels the request aborts the page's call.
func (h *hitl) wait(ctx context.Context, cr clientRequest, pc *pendingCall) (outcome, error) {
	var tick <-chan time.Time
	pc.mu.Lock()
	pc.waiting = true
	pc.mu.Unlock()
	defer func() {
		pc.mu.Lock()
		pc.waiting = false
		pc.mu.Unlock()
	}()
	defer pc.progress.target(nil, nil, nil)
	// Before the ticker: a heartbeat says at least the seconds it ticked
	// (taken after, a loaded machine made the first one say 0.99 s).
	start := time.Now()
	if cr.token != nil && cr.session != nil {
		// A heartbeat to the client while the page works, not a poll: the
		// result and dialogs arrive on their channels.
		t := time.NewTicker(time.Second)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case o := <-pc.done:
			h.remove(pc.id)
			return o, nil
		case ask := <-pc.dialogs:
			pc.mu.Lock()
			pc.asking = &ask
			pc.mu.Unlock()
			h.add(pc)
			return outcome{asks: mcp.InputRequestMap{"dialog": dialogElicit(ask.d)}, state: h.stateOf(pc)}, nil
		case q := <-pc.questions:
			return h.questionsArrived(ctx, pc, q)
		case <-tick:
			secs := time.Since(start).Seconds()
			pc.progress.heartbeat(ctx, secs, fmt.Sprintf("%s is still running in the page (%.0f s)", pc.name, secs))
		case <-ctx.Done():
			pc.cancel()
			h.remove(pc.id)
			return outcome{}, ctx.Err()
		}
	}
}

func (h *hitl) inputRequired(pc *pendingCall, key string, p *mcp.ElicitParams) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{key: p},
		RequestState:  h.stateOf(pc),
	}
}

func errResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// compact shows arguments briefly in a question.
func compact(args json.RawMessage) string {
	s := string(args)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if s == "" {
		s = "{}"
	}
	return s
}
