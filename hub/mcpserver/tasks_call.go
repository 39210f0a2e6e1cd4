package mcpserver

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file makes a call a task. A call of a client that declared the
// Tasks extension, to a tool whose task support is optional or required,
// first runs in the client's request for TaskOptions.After: when it ends
// by then, an optional tool's result is the answer (a required tool's
// becomes a finished task); when the page asks the client something by
// then, the question is the answer (input_required, multi round-trip, as
// for any call), and the retry that answers it starts the same again; a
// call still running after that becomes a task, whose page call outlives
// the request. A task's questions wait in its inputRequests for
// tasks/update, and tasks/cancel cancels its page call.

// taskSlot is how a tools/call's handler tells taskMiddleware that it
// made the call a task.
type taskSlot struct {
	declared bool   // the client declared the extension
	owner    string // who makes the call (callerOf)
	made     *createTaskResult
}

type taskSlotKey struct{}

// taskSlotFrom returns the slot of a tools/call whose client declared the
// extension, or nil.
func taskSlotFrom(ctx context.Context) *taskSlot {
	slot, _ := ctx.Value(taskSlotKey{}).(*taskSlot)
	if slot == nil || !slot.declared {
		return nil
	}
	return slot
}

// step is where a task's call stands when its request, or its run, stops
// waiting: an outcome or an error.
type step struct {
	o   outcome
	err error
}

// taskCall runs a call that may become a task (support optional or
// required) for a client that declared the extension.
func (s *Server) taskCall(ctx context.Context, req *mcp.CallToolRequest, name, support string, slot *taskSlot) (*mcp.CallToolResult, error) {
	h := s.hitl
	cr := toolRequest(ctx, req)
	var pc *pendingCall
	if cr.state != "" {
		var o outcome
		var err error
		if pc, o, err = h.claim(cr, name, cr.owner); pc == nil {
			if err != nil {
				return nil, err
			}
			return o.toolResult()
		}
	} else {
		if ask, _ := s.needsConfirm(name); ask {
			// The go-ahead first, in the request (its retry comes back here).
			return s.handleCall(ctx, req, name, req.Params.Arguments)
		}
		pc, _ = s.prepareCall(ctx, req, name, req.Params.Arguments, cr)
		h.start(pc)
	}
	// The call's waits run on wctx, which the request's end cancels until
	// the call is a task, and tasks/cancel or the task's end after that.
	wctx, wcancel := context.WithCancel(context.Background())
	bare := clientRequest{caps: cr.caps, owner: cr.owner, answers: cr.answers, state: cr.state}
	steps := make(chan step, 1)
	go func() {
		var st step
		if cr.state != "" {
			st.o, st.err = h.resume(wctx, bare, pc)
		} else {
			st.o, st.err = h.wait(wctx, bare, pc)
		}
		steps <- st
	}()
	stop := func() {
		wcancel()
		pc.cancel()
		h.remove(pc.id)
	}
	timer := time.NewTimer(s.opts.Tasks.After)
	defer timer.Stop()
	select {
	case st := <-steps:
		if st.err != nil || st.o.asks != nil || support != taskRequired {
			wcancel()
			return stepResult(st)
		}
		// A required task's call that ended at once is a finished task.
		t := s.tasks.create(slot.owner, name, stop)
		if t == nil {
			wcancel()
			return stepResult(st)
		}
		finishTask(wctx, t, st)
		wcancel()
		return slot.task(t), nil
	case <-timer.C:
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	}
	t := s.tasks.create(slot.owner, name, stop)
	if t == nil {
		// No room for another task: the call answers in its request, as
		// without the extension.
		s.logger.Warn("a call was not made a task: its owner has the most unfinished tasks, or the server the most tasks", "name", name,
			"per_person", s.tasks.opts.MaxPerPerson)
		select {
		case st := <-steps:
			wcancel()
			return stepResult(st)
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		}
	}
	pc.progress.target(nil, nil, nil)
	go s.runTask(wctx, t, pc, steps, bare)
	return slot.task(t), nil
}

// task records that the call is the task t, and returns the handler's
// placeholder result (taskMiddleware answers with t's CreateTaskResult).
func (slot *taskSlot) task(t *task) *mcp.CallToolResult {
	slot.made = t.createResult()
	return &mcp.CallToolResult{Content: []mcp.Content{}}
}

// stepResult is a step as the request's own answer.
func stepResult(st step) (*mcp.CallToolResult, error) {
	if st.err != nil {
		return nil, st.err
	}
	return st.o.toolResult()
}

// runTask follows a task's call from its current step (on steps) to its
// end: a question puts the task in input_required until tasks/update
// answers it, then the call goes on.
func (s *Server) runTask(wctx context.Context, t *task, pc *pendingCall, steps chan step, cr clientRequest) {
	h := s.hitl
	for {
		st := <-steps
		if st.err != nil || st.o.asks == nil {
			finishTask(wctx, t, st)
			return
		}
		t.ask(st.o.asks)
		select {
		case <-t.answered:
		case <-wctx.Done():
			pc.cancel()
			h.remove(pc.id)
			return
		}
		next := cr
		next.answers = t.takeAnswers()
		go func() {
			var st step
			st.o, st.err = h.resume(wctx, next, pc)
			steps <- st
		}()
	}
}

// finishTask ends t with the call's last step: completed with its result
// (a tool's error result too), failed with the error of a call that broke
// (its page went away, its page server answered with a protocol error) or
// could not go on, cancelled when the task's waits were cancelled.
func finishTask(wctx context.Context, t *task, st step) {
	switch {
	case st.err != nil && wctx.Err() != nil:
		t.end(taskCancelled, "cancelled", nil, nil)
	case st.err != nil:
		je := &jsonrpc.Error{}
		if !errors.As(st.err, &je) {
			je = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: st.err.Error()}
		}
		t.end(taskFailed, je.Message, nil, je)
	default:
		res, err := st.o.toolResult()
		switch {
		case err != nil:
			t.end(taskFailed, err.Error(), nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()})
		case st.o.broken:
			msg := resultText(res)
			t.end(taskFailed, msg, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg})
		default:
			t.end(taskCompleted, "", res, nil)
		}
	}
}
