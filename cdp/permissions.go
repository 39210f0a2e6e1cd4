package cdp

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	cdpt "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file decides the Permissions Policy feature "tools" for polyfilled
// documents, the way Chromium does for its native WebMCP (default allowlist
// 'self'): a top-level document may use tools unless its Permissions-Policy
// header excludes its origin; a frame may when its parent may, the parent's
// header does not exclude the frame's origin, and either its <iframe>'s
// allow attribute grants the feature to the frame's origin or (with no
// allow entry for it) the frame is same-origin with its parent; the frame's
// own header may then disable it. Every fact comes from CDP (the frame
// tree, DOM.getFrameOwner and the owner's attributes, the document's
// response headers), never from the page. The verdict goes to the page
// script through bridge.policy; a denial is also reported to the sink as a
// refusal.

// maxPolicyHeaders bounds the remembered Permissions-Policy headers (one per
// frame); the map starts over past it.
const maxPolicyHeaders = 4096

// policyNetwork enables the Network domain for the document responses'
// headers only: nothing of the payloads is kept.
func policyNetwork() *network.EnableParams {
	return &network.EnableParams{MaxTotalBufferSize: ptr[int64](1 << 10), MaxResourceBufferSize: ptr[int64](1 << 10)}
}

// maxPolicyDepth bounds the walk up the frame tree.
const maxPolicyDepth = 32

// policyHeaders remembers the Permissions-Policy header of each frame's
// latest document response, from Network.responseReceived on any session
// (a cross-process frame's navigation is reported on its parent's).
type policyHeaders struct {
	mu sync.Mutex
	m  map[cdpt.FrameID]string
}

func (h *policyHeaders) set(f cdpt.FrameID, v string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil || len(h.m) >= maxPolicyHeaders {
		h.m = make(map[cdpt.FrameID]string)
	}
	h.m[f] = v
}

func (h *policyHeaders) get(f cdpt.FrameID) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m[f]
}

// onResponse records the Permissions-Policy header of a document response.
func (b *Browser) onResponse(params jsonv2.Value) {
	var ev network.EventResponseReceived
	if decode(params, &ev) != nil || ev.Type != network.ResourceTypeDocument || ev.Response == nil || ev.FrameID == "" {
		return
	}
	v := ""
	for k, val := range ev.Response.Headers {
		if s, ok := val.(string); ok && strings.EqualFold(k, "permissions-policy") {
			v = s
		}
	}
	b.policyHeaders.set(ev.FrameID, v)
}

// toolsVerdict is the outcome for one document.
type toolsVerdict struct {
	allowed bool
	reason  string // why not, worded for a person
}

// frameFacts are what CDP says of one frame.
type frameFacts struct {
	frame  *cdpt.Frame
	t      *targetState // the target whose session holds the frame's document
	parent cdpt.FrameID // "" for a top-level frame
}

// applyPolicy decides the feature for a polyfilled frame and hands the
// verdict to its bridge. It runs once per document, right after the bridge
// is adopted, and says whether tools are allowed. (A top-level document's
// verdict goes with the bridge's first read, in adopt.) A denial is not a
// refusal by itself: most denied frames (ads, players) register nothing.
// The tools a denied document tried to register come with its list
// (bridge.list's denied), and pageTools reports each of those.
func (b *Browser) applyPolicy(ctx context.Context, d *docState, bridge runtime.RemoteObjectID) (allowed bool) {
	v := b.toolsVerdict(ctx, d)
	var ok bool
	if err := b.callBridge(ctx, d.t.sess, bridge, "function(a){return this.policy(a)}", []any{v.allowed}, &ok); err != nil {
		b.logger.Debug("handing the tools policy to a page failed", "err", err)
		return false
	}
	return b.noteVerdict(d, v)
}

// noteVerdict records the verdict handed to a document: on a denial, why
// (the refusals of the tools it tries to register say so). It says
// whether tools are allowed.
func (b *Browser) noteVerdict(d *docState, v toolsVerdict) bool {
	if v.allowed {
		return true
	}
	b.logger.Debug("a frame may not use WebMCP tools (Permissions Policy \"tools\")", "origin", d.origin, "frame", d.frameID, "reason", v.reason)
	b.mu.Lock()
	d.denied = v.reason
	b.mu.Unlock()
	return false
}

// deniedRefusals are the refusals of the tools a denied document tried to
// register (names as the page script listed them; "*" for one whose name
// it could not read), and of how many more it tried past the page
// script's bound.
func deniedRefusals(src core.Source, reason string, dl *deniedList, now time.Time) []core.Refusal {
	if dl == nil || reason == "" {
		return nil
	}
	detail := "the document tried to register it, but may not use tools (Permissions Policy \"tools\"): " + reason
	var out []core.Refusal
	for _, name := range dl.Names {
		out = append(out, core.Refusal{Reason: core.ReasonPermissions, Tool: name, Detail: detail,
			Origin: src.Origin, URL: src.URL, Tab: src.Tab, At: now})
	}
	if dl.More > 0 {
		out = append(out, core.Refusal{Reason: core.ReasonPermissions, Tool: "*",
			Detail: fmt.Sprintf("the document tried to register %d more tools, but may not use tools (Permissions Policy \"tools\"): %s", dl.More, reason),
			Origin: src.Origin, URL: src.URL, Tab: src.Tab, At: now})
	}
	return out
}

// toolsVerdict walks from the document's frame up to the top of its tab.
// When CDP cannot tell (a frame gone meanwhile), a top-level document is
// allowed and a frame is not.
func (b *Browser) toolsVerdict(ctx context.Context, d *docState) toolsVerdict {
	if d.t.kind == "page" && string(d.frameID) == d.t.targetID {
		return headerVerdict(b.policyHeaders.get(d.frameID), d.origin)
	}
	trees := map[*targetState]*page.FrameTree{}
	v, err := b.frameVerdict(ctx, d, d.t.tab, d.frameID, trees, 0)
	if err != nil {
		b.logger.Debug("reading a frame's tools policy failed", "frame", d.frameID, "err", err)
		return toolsVerdict{reason: "its frame's policy could not be read: " + err.Error()}
	}
	return v
}

func (b *Browser) frameVerdict(ctx context.Context, self *docState, tab string, f cdpt.FrameID, trees map[*targetState]*page.FrameTree, depth int) (toolsVerdict, error) {
	if depth > maxPolicyDepth {
		return toolsVerdict{}, fmt.Errorf("frames nested deeper than %d", maxPolicyDepth)
	}
	ff, err := b.locateFrame(ctx, tab, f, trees)
	if err != nil {
		return toolsVerdict{}, err
	}
	origin := b.originOf(self, f, ff.frame)
	header := b.policyHeaders.get(f)
	if ff.parent == "" {
		return headerVerdict(header, origin), nil
	}
	pv, err := b.frameVerdict(ctx, self, tab, ff.parent, trees, depth+1)
	if err != nil {
		return toolsVerdict{}, err
	}
	if !pv.allowed {
		return toolsVerdict{reason: "its parent frame may not use tools (" + pv.reason + ")"}, nil
	}
	pf, err := b.locateFrame(ctx, tab, ff.parent, trees)
	if err != nil {
		return toolsVerdict{}, err
	}
	allow, src, err := b.frameOwner(ctx, pf.t, f, pf.frame.URL)
	if err != nil {
		return toolsVerdict{}, err
	}
	v := childVerdict(childFacts{
		origin: origin, urlOrigin: tupleOrigin(ff.frame.URL),
		parentOrigin: b.originOf(self, ff.parent, pf.frame), parentHeader: b.policyHeaders.get(ff.parent),
		allow: allow, srcOrigin: src,
	})
	if !v.allowed {
		return v, nil
	}
	return headerVerdict(header, origin), nil
}

// originOf is the origin of a frame's document: its execution context's,
// the latest of the frame's (the frame tree reports a sandboxed or srcdoc
// frame's origin as its precursor's). The document being judged is passed
// as self, so a context about to be destroyed is never taken for it.
func (b *Browser) originOf(self *docState, f cdpt.FrameID, fr *cdpt.Frame) string {
	if self != nil && self.frameID == f {
		return self.origin
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var latest *docState
	for _, d := range b.docs {
		if d.frameID == f && d.alive && (latest == nil || d.ctxID > latest.ctxID) {
			latest = d
		}
	}
	if latest != nil {
		return latest.origin
	}
	return fr.SecurityOrigin
}

// locateFrame finds a frame among the targets of a tab, reading each
// target's frame tree once per verdict.
func (b *Browser) locateFrame(ctx context.Context, tab string, f cdpt.FrameID, trees map[*targetState]*page.FrameTree) (frameFacts, error) {
	b.mu.Lock()
	var ts []*targetState
	for _, t := range b.targets {
		if t.tab == tab {
			ts = append(ts, t)
		}
	}
	b.mu.Unlock()
	// The target whose own frame it is first: a parent's tree may list a
	// cross-process child too.
	for i, t := range ts {
		if t.targetID == string(f) {
			ts[0], ts[i] = ts[i], ts[0]
		}
	}
	for _, t := range ts {
		tree, ok := trees[t]
		if !ok {
			res, err := cdpt.Call(ctx, t.sess, page.GetFrameTree, cdpt.Empty{})
			if err == nil {
				tree = res.FrameTree
			}
			trees[t] = tree
		}
		if fr, parent, found := findFrame(tree, f, ""); found {
			if parent == "" && t.kind == "iframe" {
				parent = t.parentFrame
			}
			return frameFacts{frame: fr, t: t, parent: parent}, nil
		}
	}
	return frameFacts{}, fmt.Errorf("frame %s is not in its tab any more", f)
}

func findFrame(tree *page.FrameTree, f, parent cdpt.FrameID) (*cdpt.Frame, cdpt.FrameID, bool) {
	if tree == nil || tree.Frame == nil {
		return nil, "", false
	}
	if tree.Frame.ID == f {
		return tree.Frame, parent, true
	}
	for _, c := range tree.ChildFrames {
		if fr, p, ok := findFrame(c, f, tree.Frame.ID); ok {
			return fr, p, ok
		}
	}
	return nil, "", false
}

// frameOwner reads the allow attribute of a frame's owner element (nil
// when it has none, or is not an <iframe>) and the origin of its src.
func (b *Browser) frameOwner(ctx context.Context, parent *targetState, f cdpt.FrameID, parentURL string) (allow *string, srcOrigin string, err error) {
	owner, err := cdpt.Call(ctx, parent.sess, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: f})
	if err != nil {
		return nil, "", fmt.Errorf("the frame's owner element: %w", err)
	}
	node, err := cdpt.Call(ctx, parent.sess, dom.DescribeNode, dom.DescribeNodeParams{BackendNodeID: owner.BackendNodeID, Depth: ptr[int64](0)})
	if err != nil || node.Node == nil {
		return nil, "", fmt.Errorf("the frame's owner element: %w", err)
	}
	attrs := map[string]string{}
	for i := 0; i+1 < len(node.Node.Attributes); i += 2 {
		k := strings.ToLower(node.Node.Attributes[i])
		if _, dup := attrs[k]; !dup {
			attrs[k] = node.Node.Attributes[i+1]
		}
	}
	srcOrigin = tupleOrigin(parentURL) // srcdoc, about:blank: the parent's
	if s, ok := attrs["src"]; ok && s != "" {
		if base, err := url.Parse(parentURL); err == nil {
			if u, err := base.Parse(strings.TrimSpace(s)); err == nil {
				srcOrigin = tupleOrigin(u.String())
			}
		}
	}
	if a, ok := attrs["allow"]; ok && strings.EqualFold(node.Node.NodeName, "iframe") {
		allow = &a
	}
	return allow, srcOrigin, nil
}
