package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
)

// This file decides which page tools tools/list holds (--list,
// --max-listed-tools) and answers calls of the tools it leaves out, and of
// tools that do not exist at all.

// ListMode says which page tools tools/list holds.
type ListMode string

// The list modes.
const (
	// ListAll lists every page tool, cached ones included (the default).
	ListAll ListMode = "all"
	// ListActive lists the page tools of the active tab only: the one
	// webmcp_activate_tab brought to the front, else the most recently
	// used.
	ListActive ListMode = "active"
)

// ListPolicy says which page tools tools/list holds. Every tool stays
// reachable: by its name, through webmcp_call, and in webmcp_list_tools.
type ListPolicy struct {
	// Mode is ListAll (the default) or ListActive.
	Mode ListMode
	// Cached adds, with ListActive, the cached tools of closed pages.
	Cached bool
	// Max caps the number of tools in tools/list, the server's own
	// included (0 for no cap): the active tab's tools first, then those of
	// the most recently used tabs, then cached tools.
	Max int
}

// ListModes are the values --list takes, the default first (shell
// completion offers them).
func ListModes() []string { return []string{"all", "active", "active+cached"} }

// ParseListPolicy reads the --list and --max-listed-tools flags: mode is
// "all", "active" or "active+cached". own is the number of the server's own
// tools (OwnToolCount): they are always listed and count against the cap,
// so a cap below it could not be kept and is refused.
func ParseListPolicy(mode string, max, own int) (ListPolicy, error) {
	var p ListPolicy
	modes := ListModes()
	switch {
	case mode == "" || mode == modes[0]:
		p.Mode = ListAll
	case mode == modes[1]:
		p.Mode = ListActive
	case mode == modes[2]:
		p.Mode, p.Cached = ListActive, true
	default:
		return p, fmt.Errorf("--list %q: want all, active or active+cached", mode)
	}
	if max < 0 || (max > 0 && max < own) {
		return p, fmt.Errorf("--max-listed-tools %d: must be 0 (no cap) or at least %d: %s", max, own, ownToolsNote(own))
	}
	p.Max = max
	return p, nil
}

// ownToolsNote says why a cap cannot go below own tools.
func ownToolsNote(own int) string {
	note := fmt.Sprintf("the server's own %d webmcp_* tools are always listed and count against the cap", own)
	if own > ownToolsBase {
		note += fmt.Sprintf(" (%d with --no-tab-tools)", ownToolsBase)
	}
	return note
}

// String says the policy as its flags would.
func (p ListPolicy) String() string {
	s := "--list " + string(p.Mode)
	if p.Mode == "" {
		s = "--list all"
	}
	if p.Cached {
		s += "+cached"
	}
	if p.Max > 0 {
		s += " --max-listed-tools " + strconv.Itoa(p.Max)
	}
	return s
}

// filterListed returns the page tools that tools/list holds under p, in
// the catalog's order. order is the open tabs' numbers, the active tab
// first, then the most recently used (hub.TabOrder); own is the number of
// the server's own tools, which count against p.Max.
func filterListed(tools []hub.RoutedTool, order []int, p ListPolicy, own int) []hub.RoutedTool {
	if p.Mode != ListActive && p.Max <= 0 {
		return tools
	}
	rank := make(map[int]int, len(order))
	for i, n := range order {
		rank[n] = i
	}
	out := make([]hub.RoutedTool, 0, len(tools))
	if p.Mode == ListActive {
		// One name per tool of the active tab: its site-level name, not
		// also the tab-level one that reaches the same document.
		kept := map[string]int{}
		for _, rt := range tools {
			src := rt.Source
			if src.Cached {
				if p.Cached {
					out = append(out, rt)
				}
				continue
			}
			if len(order) == 0 || src.Tab != order[0] {
				continue
			}
			key := src.Origin + "\x00" + src.Frame + "\x00" + src.Tool
			if i, ok := kept[key]; ok {
				if len(rt.Name) < len(out[i].Name) {
					out[i] = rt
				}
				continue
			}
			kept[key] = len(out)
			out = append(out, rt)
		}
	} else {
		out = append(out, tools...)
	}
	budget := p.Max - own
	if p.Max <= 0 || len(out) <= budget {
		return out
	}
	budget = max(budget, 0)
	tabRank := func(rt hub.RoutedTool) int {
		if rt.Source.Cached {
			return len(order) + 1
		}
		if r, ok := rank[rt.Source.Tab]; ok {
			return r
		}
		return len(order)
	}
	sort.SliceStable(out, func(i, j int) bool { return tabRank(out[i]) < tabRank(out[j]) })
	out = out[:budget]
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// listedTools is the catalog as tools/list holds it under the list policy;
// it records how many page tools it left out, for webmcp_list_tools. The
// slice may be the hub's own (hub.SharedTools): read it only.
func (s *Server) listedTools() []hub.RoutedTool {
	all := s.hub.SharedTools() // read only: filterListed copies what it changes
	p := s.opts.List
	var order []int
	if p.Mode == ListActive || p.Max > 0 {
		order = s.hub.TabOrder()
	}
	listed := filterListed(all, order, p, s.ownCount)
	s.unlisted.Store(int64(len(all) - len(listed)))
	return listed
}

// listPolicy describes the list policy for a note to the agent.
func (s *Server) listPolicy() string { return s.opts.List.String() }

// unlistedTool is the ToolSet's Unlisted hook: a tools/call of a name that
// tools/list does not hold goes to the page tool of that name (one the
// list policy left out, or one listed after the client's last tools/list),
// and a name no page has gets an error that teaches (hub.Call's). Names in
// the server's own namespace are left to the server's own tools.
func (s *Server) unlistedTool(name string) mcp.ToolHandler {
	if strings.HasPrefix(strings.ToLower(name), hub.ReservedPrefix) {
		return nil
	}
	return s.ownNameCall(name, s.callHandler(name))
}

// teachUnknown is receiving middleware: a tools/call of a name in the
// server's own namespace that no tool has gets, in place of the SDK's bare
// "unknown tool" error, an error result that says what to do.
func (s *Server) teachUnknown(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		var we *jsonrpc.Error
		if method != "tools/call" || !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.HasPrefix(we.Message, "unknown tool") {
			return res, err
		}
		r, ok := req.(*mcp.CallToolRequest)
		if !ok || r.Params == nil {
			return res, err
		}
		return CallToolResult(s.hub.UnknownTool(r.Params.Name)), nil
	}
}
