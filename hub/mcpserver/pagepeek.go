package mcpserver

import (
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// This file reads what the go-sdk's typed results drop from a page
// server's answers, as the transport passes them: the server's
// browser.cacheSupported capability (MCP-B's extension of initialize), and
// each tool's annotations as the server gave them (mcp.ToolAnnotations
// keeps only MCP's hints, drops keys such as cache, and writes
// readOnlyHint and idempotentHint as false where the server gave none),
// and each tool's execution.taskSupport (the 2026-07-28 mcp.Tool has no
// execution; tasks.go reads it).

// pagePeek holds what was read of one page server's answers.
type pagePeek struct {
	mu             sync.Mutex
	asked          map[jsonrpc.ID]string // our pending initialize and tools/list, by id
	cacheSupported bool
	annotations    map[string]map[string]any // by tool name, of the current listing
	tasks          map[string]string         // execution.taskSupport by tool name, likewise
}

// maxPeekAsked bounds the requests of ours a pagePeek waits to read the
// answers of.
const maxPeekAsked = 16

// sent notes a request of ours whose answer is read.
func (pp *pagePeek) sent(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() || (req.Method != "initialize" && req.Method != "tools/list") {
		return
	}
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.asked == nil {
		pp.asked = make(map[jsonrpc.ID]string)
	}
	if len(pp.asked) >= maxPeekAsked {
		// A server that never answers: forget the oldest questions rather
		// than grow (an answer to a forgotten one is simply not read).
		clear(pp.asked)
	}
	pp.asked[req.ID] = req.Method
}

// received reads the answer msg if it answers a request noted by sent.
func (pp *pagePeek) received(msg jsonrpc.Message) {
	res, ok := msg.(*jsonrpc.Response)
	if !ok {
		return
	}
	pp.mu.Lock()
	defer pp.mu.Unlock()
	method, ok := pp.asked[res.ID]
	if !ok {
		return
	}
	delete(pp.asked, res.ID)
	if res.Error != nil {
		return
	}
	switch method {
	case "initialize":
		var r struct {
			Capabilities struct {
				Browser struct {
					CacheSupported bool `json:"cacheSupported"`
				} `json:"browser"`
			} `json:"capabilities"`
		}
		if json.Unmarshal(res.Result, &r) == nil {
			pp.cacheSupported = r.Capabilities.Browser.CacheSupported
		}
	case "tools/list":
		var r struct {
			Tools []struct {
				Name        string         `json:"name"`
				Annotations map[string]any `json:"annotations"`
				Execution   struct {
					TaskSupport string `json:"taskSupport"`
				} `json:"execution"`
			} `json:"tools"`
		}
		if json.Unmarshal(res.Result, &r) != nil {
			return
		}
		if pp.annotations == nil {
			pp.annotations = make(map[string]map[string]any)
		}
		for _, t := range r.Tools {
			if t.Annotations != nil {
				pp.annotations[t.Name] = t.Annotations
			}
			switch ts := t.Execution.TaskSupport; ts {
			case taskForbidden, taskOptional, taskRequired: // any other value is dropped
				if pp.tasks == nil {
					pp.tasks = make(map[string]string)
				}
				pp.tasks[t.Name] = ts
			}
		}
	}
}

// startListing forgets the annotations of the last listing.
func (pp *pagePeek) startListing() {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.annotations, pp.tasks = nil, nil
}

// toolAnnotations returns the annotations the server gave tool in this
// listing (nil for none), and whether it declared browser.cacheSupported.
func (pp *pagePeek) toolAnnotations(tool string) (map[string]any, bool) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	return pp.annotations[tool], pp.cacheSupported
}

// taskSupport returns the execution.taskSupport the server gave tool in
// this listing ("" for none).
func (pp *pagePeek) taskSupport(tool string) string {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	return pp.tasks[tool]
}
