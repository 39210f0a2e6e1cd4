package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file serves the Tasks extension of MCP 2026-07-28
// (io.modelcontextprotocol/tasks, SEP-2663): the extension is advertised
// to every client in initialize and server/discover; a tools/call of a
// client that declares it (for its session, or in the request's _meta)
// may be answered with a task, which the client polls with tasks/get,
// answers with tasks/update and cancels with tasks/cancel. Which calls
// become tasks, and how, is tasks_call.go; the tasks kept, their bounds
// and their owners are tasks_store.go. The SDK has no Tasks support: the
// three methods are registered as custom methods (so both transports
// accept them) and answered by the receiving middleware here, which also
// rewrites the tools/call that made a task into its CreateTaskResult.

// TasksExtension is the Tasks extension's name in capabilities.extensions.
const TasksExtension = "io.modelcontextprotocol/tasks"

// A tool's task support: its page server's execution.taskSupport; a
// WebMCP tool's is optional.
const (
	taskForbidden = "forbidden"
	taskOptional  = "optional"
	taskRequired  = "required"
)

// The statuses of a task.
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

// The tasks methods.
const (
	methodTasksGet    = "tasks/get"
	methodTasksUpdate = "tasks/update"
	methodTasksCancel = "tasks/cancel"
)

// TaskOptions configures the Tasks extension (--tasks, --task-after).
type TaskOptions struct {
	// Off turns the extension off (--tasks off): it is not advertised,
	// the tasks methods are unknown (-32601), and every call answers in
	// its own request.
	Off bool
	// After is how long a call that may become a task runs in the
	// client's request before it becomes one (--task-after; default
	// DefaultTaskAfter).
	After time.Duration
	// TTL is how long a task is kept from its creation, its result
	// included (default DefaultTaskTTL); a task still running then is
	// cancelled.
	TTL time.Duration
	// MaxPerPerson bounds the unfinished tasks of one owner (an OAuth
	// principal, or every client of an endpoint without OAuth; default
	// DefaultMaxTasksPerPerson).
	MaxPerPerson int
	// Budget bounds the tasks kept at once, finished or not, by the
	// servers that share it (every person's space of one endpoint); nil
	// gives the server a budget of its own of DefaultMaxTasks.
	Budget *TaskBudget
}

// Defaults of TaskOptions.
const (
	DefaultTaskAfter         = time.Second
	DefaultTaskTTL           = 10 * time.Minute
	DefaultMaxTasksPerPerson = 32
	DefaultMaxTasks          = 1024
)

// taskPollInterval is the pollIntervalMs a task suggests.
const taskPollInterval = 500 * time.Millisecond

// maxTaskAnswerBytes bounds one answer of a tasks/update (the request body
// is bounded too: HTTPOptions.MaxBodyBytes, or a stdio line).
const maxTaskAnswerBytes = 1 << 20

// taskParams are the params of tasks/get, tasks/update and tasks/cancel.
type taskParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
	// InputResponses are tasks/update's answers, by the keys of the
	// task's inputRequests; each is decoded only when its key is pending.
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
}

// taskWire is a task's fields on the wire, flat at the top of a result.
type taskWire struct {
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	StatusMessage  string `json:"statusMessage,omitempty"`
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	TTLMs          int64  `json:"ttlMs"`
	PollIntervalMs int64  `json:"pollIntervalMs,omitempty"`
}

// createTaskResult answers a tools/call with a task.
type createTaskResult struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
	taskWire
}

// detailedTask is tasks/get's answer: the task, its result once completed
// (an error result too), its error once failed, the questions it waits on
// while input_required.
type detailedTask struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
	taskWire
	Result        *mcp.CallToolResult `json:"result,omitempty"`
	Error         *jsonrpc.Error      `json:"error,omitempty"`
	InputRequests mcp.InputRequestMap `json:"inputRequests,omitempty"`
}

// completeResult is the empty ack of tasks/update and tasks/cancel.
type completeResult struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
}

// inputRequiredResult is an input_required result as it goes on the wire:
// the SDK's own results write "content": null (or "messages", "contents")
// beside the questions, a member the result does not have.
type inputRequiredResult struct {
	mcp.ResultBase
	ResultType    string              `json:"resultType"`
	InputRequests mcp.InputRequestMap `json:"inputRequests"`
	RequestState  string              `json:"requestState,omitempty"`
}

// declaresTasks says whether a client's capabilities declare the Tasks
// extension.
func declaresTasks(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[TasksExtension]
	return ok
}

// missingTasks is the error of a request that needs the Tasks extension
// from a client that did not declare it (-32021, with the capability it
// needs in data.requiredCapabilities).
func missingTasks(why string) error {
	data, _ := json.Marshal(mcp.MissingRequiredClientCapabilityData{RequiredCapabilities: &mcp.ClientCapabilities{
		Extensions: map[string]any{TasksExtension: map[string]any{}},
	}})
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: why + ": declare the " + TasksExtension + " extension in the client's capabilities", Data: data}
}

// unknownTask is the error for a task id that is not one of the caller's
// tasks: never made, expired, or another person's (the same error, so an
// id says nothing of anyone else's tasks).
func unknownTask(id string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown task %q: no task of yours has this id (it may have expired)", truncate(id))}
}

// registerTasks registers the tasks methods with the SDK, which then
// accepts them on every transport (unless the extension is off: they are
// then unknown methods), and the middleware that answers them.
func (s *Server) registerTasks() {
	defer s.mcp.AddReceivingMiddleware(s.taskMiddleware)
	if s.opts.Tasks.Off {
		return
	}
	never := func(context.Context, *mcp.ServerSession, *taskParams) (*completeResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: the tasks middleware did not answer"}
	}
	for _, m := range []string{methodTasksGet, methodTasksUpdate, methodTasksCancel} {
		if err := mcp.AddReceivingCustomMethod(s.mcp, m, never); err != nil {
			s.logger.Error("the Tasks extension is off: its methods could not be registered", "method", m, "err", err)
			s.opts.Tasks.Off = true
			return
		}
	}
}

// taskMiddleware is receiving middleware: it advertises the extension,
// answers the tasks methods, lets a tools/call become a task (through a
// taskSlot in its context), and writes input_required results without
// the members they do not have (that also with the extension off).
func (s *Server) taskMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if s.opts.Tasks.Off {
			res, err := next(ctx, method, req)
			return flatInputRequired(res), err
		}
		switch method {
		case "initialize", "server/discover":
			res, err := next(ctx, method, req)
			if err == nil {
				addExtension(res, TasksExtension, nil)
			}
			return res, err
		case methodTasksGet, methodTasksUpdate, methodTasksCancel:
			return s.taskMethod(method, req)
		case "tools/call":
			return s.taskToolsCall(ctx, method, req, next)
		case "prompts/get", "resources/read":
			res, err := next(ctx, method, req)
			return flatInputRequired(res), err
		}
		return next(ctx, method, req)
	}
}

// taskToolsCall runs a tools/call with a taskSlot in its context, through
// which the call's handler may make it a task (tasks_call.go). A tool that
// requires a task, called by a client that did not declare the extension,
// is refused before it runs.
func (s *Server) taskToolsCall(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	r, ok := req.(*mcp.CallToolRequest)
	if !ok || r.Params == nil {
		return next(ctx, method, req)
	}
	declared := declaresTasks(r.ClientCapabilities())
	if !declared && s.taskSupport(r.Params.Name) == taskRequired {
		return nil, missingTasks(fmt.Sprintf("%s runs only as a task", r.Params.Name))
	}
	slot := &taskSlot{declared: declared, owner: callerOf(req.GetExtra())}
	res, err := next(context.WithValue(ctx, taskSlotKey{}, slot), method, req)
	if err == nil && slot.made != nil {
		return slot.made, nil
	}
	return flatInputRequired(res), err
}

// taskSupport returns a routed tool's task support: its page server's
// declaration (forbidden when it made none), optional for a WebMCP tool,
// forbidden for a name that is no page tool (the server's own tools).
func (s *Server) taskSupport(name string) string {
	rt, ok := s.hub.Tool(name)
	if !ok {
		return taskForbidden
	}
	if rt.Source.Backend != core.BackendMCPB {
		return taskOptional
	}
	if rt.Tool.TaskSupport == "" {
		return taskForbidden
	}
	return rt.Tool.TaskSupport
}

// flatInputRequired returns an input_required result as written on the
// wire without the members it does not have; any other result as it is,
// but a tool result without content gets an empty content array.
func flatInputRequired(res mcp.Result) mcp.Result {
	var asks mcp.InputRequestMap
	var state string
	var meta mcp.Meta
	switch r := res.(type) {
	case *mcp.CallToolResult:
		if r == nil || !r.NeedsInput() {
			if r != nil && r.Content == nil && r.InputRequests == nil {
				r.Content = []mcp.Content{}
			}
			return res
		}
		asks, state, meta = r.InputRequests, r.RequestState, r.Meta
	case *mcp.GetPromptResult:
		if r == nil || !r.NeedsInput() {
			return res
		}
		asks, state, meta = r.InputRequests, r.RequestState, r.Meta
	case *mcp.ReadResourceResult:
		if r == nil || !r.NeedsInput() {
			return res
		}
		asks, state, meta = r.InputRequests, r.RequestState, r.Meta
	default:
		return res
	}
	out := &inputRequiredResult{ResultType: taskInputRequired, InputRequests: asks, RequestState: state}
	out.Meta = meta
	return out
}

// taskMethod answers tasks/get, tasks/update or tasks/cancel.
func (s *Server) taskMethod(method string, req mcp.Request) (mcp.Result, error) {
	r, ok := req.(*mcp.ServerRequest[*taskParams])
	if !ok || r.Params == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + " needs params with a taskId"}
	}
	if !declaresTasks(r.ClientCapabilities()) {
		return nil, missingTasks(method + " belongs to the Tasks extension")
	}
	t := s.tasks.get(r.Params.TaskID, callerOf(req.GetExtra()))
	if t == nil {
		return nil, unknownTask(r.Params.TaskID)
	}
	switch method {
	case methodTasksGet:
		return t.detailed(), nil
	case methodTasksUpdate:
		if err := t.update(r.Params.InputResponses); err != nil {
			return nil, err
		}
	case methodTasksCancel:
		t.cancel()
	}
	return &completeResult{ResultType: "complete"}, nil
}
