package mcpserver

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file keeps a server's tasks: each belongs to its owner (the OAuth
// principal that made it, or "" without OAuth), lives TaskOptions.TTL from
// its creation, and counts against its owner's bound of unfinished tasks
// and the shared budget of tasks kept.

// TaskBudget bounds the tasks kept at once by the servers that share it.
type TaskBudget struct {
	max int64
	n   atomic.Int64
}

// NewTaskBudget returns a budget of max tasks (DefaultMaxTasks when max
// is not positive).
func NewTaskBudget(max int) *TaskBudget {
	if max <= 0 {
		max = DefaultMaxTasks
	}
	return &TaskBudget{max: int64(max)}
}

// take counts one more task, when there is room.
func (b *TaskBudget) take() bool {
	for {
		n := b.n.Load()
		if n >= b.max {
			return false
		}
		if b.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// give counts one task less.
func (b *TaskBudget) give() { b.n.Add(-1) }

// taskStore is a server's tasks, by id.
type taskStore struct {
	opts TaskOptions
	mu   sync.Mutex
	byID map[string]*task
	// unfinished counts each owner's tasks not yet in a terminal status.
	unfinished map[string]int
}

func newTaskStore(opts TaskOptions) *taskStore {
	if opts.After <= 0 {
		opts.After = DefaultTaskAfter
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTaskTTL
	}
	if opts.MaxPerPerson <= 0 {
		opts.MaxPerPerson = DefaultMaxTasksPerPerson
	}
	if opts.Budget == nil {
		opts.Budget = NewTaskBudget(DefaultMaxTasks)
	}
	return &taskStore{opts: opts, byID: make(map[string]*task), unfinished: make(map[string]int)}
}

// task is one task: a tools/call the client polls.
type task struct {
	id, owner, tool string
	created         time.Time
	ttl             time.Duration
	store           *taskStore
	// stop ends the task's call (its page call is cancelled).
	stop func()

	mu      sync.Mutex
	status  string
	message string
	updated time.Time
	result  *mcp.CallToolResult
	err     *jsonrpc.Error
	asks    mcp.InputRequestMap // the questions not yet answered
	// answers are tasks/update's answers not yet taken by the task's run;
	// answered signals them (capacity 1).
	answers  mcp.InputResponseMap
	answered chan struct{}
	// done is closed when the task ends.
	done chan struct{}
}

// create makes a task of owner's for a call of tool, whose call stop ends,
// or returns nil when owner has MaxPerPerson unfinished tasks, or the
// budget is spent and no finished task of this server can make room.
func (ts *taskStore) create(owner, tool string, stop func()) *task {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.unfinished[owner] >= ts.opts.MaxPerPerson {
		return nil
	}
	if !ts.opts.Budget.take() {
		if !ts.evictLocked() || !ts.opts.Budget.take() {
			return nil
		}
	}
	now := time.Now()
	t := &task{id: newTaskID(), owner: owner, tool: tool, created: now, ttl: ts.opts.TTL, store: ts, stop: stop,
		status: taskWorking, updated: now, answered: make(chan struct{}, 1), done: make(chan struct{})}
	ts.byID[t.id] = t
	ts.unfinished[owner]++
	time.AfterFunc(ts.opts.TTL, func() { ts.expire(t) })
	return t
}

// newTaskID returns an unguessable task id: 128 random bits.
func newTaskID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// get returns owner's task of that id, or nil.
func (ts *taskStore) get(id, owner string) *task {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.byID[id]
	if t == nil || t.owner != owner {
		return nil
	}
	return t
}

// expire forgets t at the end of its TTL, cancelling its call if it still
// runs.
func (ts *taskStore) expire(t *task) {
	ts.mu.Lock()
	_, kept := ts.byID[t.id]
	if kept {
		delete(ts.byID, t.id)
		ts.opts.Budget.give()
	}
	ts.mu.Unlock()
	if kept {
		t.end(taskCancelled, "the task expired (its ttlMs passed)", nil, nil)
		t.stop()
	}
}

// evictLocked forgets this server's oldest finished task, giving its room
// in the budget back, and says whether there was one.
func (ts *taskStore) evictLocked() bool {
	var oldest *task
	for _, t := range ts.byID {
		if t.terminal() && (oldest == nil || t.created.Before(oldest.created)) {
			oldest = t
		}
	}
	if oldest == nil {
		return false
	}
	delete(ts.byID, oldest.id)
	ts.opts.Budget.give()
	return true
}

// finished counts one unfinished task of owner's less.
func (ts *taskStore) finished(owner string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.unfinished[owner]--; ts.unfinished[owner] <= 0 {
		delete(ts.unfinished, owner)
	}
}

// terminal says whether t has ended.
func (t *task) terminal() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return isTerminal(t.status)
}

func isTerminal(status string) bool {
	return status == taskCompleted || status == taskFailed || status == taskCancelled
}

// wire returns t's fields as they go on the wire; t.mu is held.
func (t *task) wireLocked() taskWire {
	return taskWire{
		TaskID: t.id, Status: t.status, StatusMessage: t.message,
		CreatedAt:      t.created.UTC().Format(time.RFC3339Nano),
		LastUpdatedAt:  t.updated.UTC().Format(time.RFC3339Nano),
		TTLMs:          t.ttl.Milliseconds(),
		PollIntervalMs: taskPollInterval.Milliseconds(),
	}
}

// created returns the CreateTaskResult of t.
func (t *task) createResult() *createTaskResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	return &createTaskResult{ResultType: "task", taskWire: t.wireLocked()}
}

// detailed returns tasks/get's answer for t.
func (t *task) detailed() *detailedTask {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := &detailedTask{ResultType: "complete", taskWire: t.wireLocked()}
	switch t.status {
	case taskCompleted:
		d.Result = t.result
	case taskFailed:
		d.Error = t.err
	case taskInputRequired:
		d.InputRequests = t.asks
	}
	return d
}

// end puts t in a terminal status, once: a later end is ignored.
func (t *task) end(status, message string, res *mcp.CallToolResult, err *jsonrpc.Error) {
	t.mu.Lock()
	if isTerminal(t.status) {
		t.mu.Unlock()
		return
	}
	t.status, t.message, t.updated = status, message, time.Now()
	if res != nil && res.Content == nil {
		res.Content = []mcp.Content{}
	}
	t.result, t.err, t.asks = res, err, nil
	t.mu.Unlock()
	close(t.done)
	t.store.finished(t.owner)
}

// cancel cancels t (tasks/cancel): its status is cancelled at once, and
// its page call is cancelled. A task that has ended stays as it is.
func (t *task) cancel() {
	if t.terminal() {
		return
	}
	t.end(taskCancelled, "cancelled by the client", nil, nil)
	t.stop()
}

// ask puts t in input_required with the questions asks, but for those
// already answered by a tasks/update not yet taken; with none left, t
// stays working.
func (t *task) ask(asks mcp.InputRequestMap) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if isTerminal(t.status) {
		return
	}
	left := make(mcp.InputRequestMap, len(asks))
	for k, q := range asks {
		if _, answered := t.answers[k]; !answered {
			left[k] = q
		}
	}
	t.asks = left
	if len(left) > 0 {
		t.status, t.message, t.updated = taskInputRequired, "waiting for the client's answers (tasks/update)", time.Now()
	}
}

// update takes a tasks/update's answers: those to pending questions are
// kept for the task's run (the others are ignored), and the questions
// they answer are no longer pending; the task is working again once none
// is. An answer to a pending question that is not an input response is
// the request's error.
func (t *task) update(raw map[string]json.RawMessage) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status != taskInputRequired {
		return nil
	}
	got := 0
	for k, r := range raw {
		if _, pending := t.asks[k]; !pending {
			continue
		}
		if len(r) > maxTaskAnswerBytes {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("inputResponses[%q] is %d bytes, over the limit of %d", truncate(k), len(r), maxTaskAnswerBytes)}
		}
		var m mcp.InputResponseMap
		if err := json.Unmarshal([]byte(`{"k":`+string(r)+`}`), &m); err != nil {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("inputResponses[%q] is not an answer to an input request: %v", truncate(k), err)}
		}
		if t.answers == nil {
			t.answers = make(mcp.InputResponseMap)
		}
		t.answers[k] = m["k"]
		delete(t.asks, k)
		got++
	}
	if got == 0 {
		return nil
	}
	if len(t.asks) == 0 {
		t.status, t.message, t.asks = taskWorking, "", nil
	}
	t.updated = time.Now()
	select {
	case t.answered <- struct{}{}:
	default:
	}
	return nil
}

// takeAnswers returns the answers given since the last take.
func (t *task) takeAnswers() mcp.InputResponseMap {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.answers
	t.answers = nil
	return a
}
