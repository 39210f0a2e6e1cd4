package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file serves the resources and prompts of MCP-B page servers: it
// keeps the go-sdk server's resources, resource templates and prompts equal
// to the hub's server catalog (the SDK then sends the list_changed
// notifications), forwards reads, prompt gets and subscriptions to the page
// server's session, and rewrites URIs both ways.

// maxReadBytes bounds a resource read's or a prompt's result.
const maxReadBytes = 1 << 20

// servedCatalog is what the go-sdk server lists now, by routed URI or name,
// with the JSON it was rendered from (to skip unchanged entries).
type servedCatalog struct {
	mu        sync.Mutex // serializes syncs
	resources map[string]string
	templates map[string]string
	prompts   map[string]string
	// subs counts the client subscriptions per routed URI.
	subs map[string]int
}

// listServerCatalog reads a page server's resources, templates and prompts
// and hands them to the hub, then syncs what we serve.
func (s *Server) listServerCatalog(ctx context.Context, p *pageSession, caps *mcp.ServerCapabilities) {
	lctx, cancel := context.WithTimeout(ctx, s.hub.PageServerInitTimeout())
	defer cancel()
	var res []core.Resource
	var tpls []core.ResourceTemplate
	var prompts []core.Prompt
	if caps.Resources != nil {
		n := 0
		for r, err := range p.cs.Resources(lctx, nil) {
			if err != nil || n >= 1000 {
				break
			}
			n++
			raw, _ := json.Marshal(r)
			res = append(res, core.Resource{URI: r.URI, Name: r.Name, Raw: raw})
		}
		n = 0
		for t, err := range p.cs.ResourceTemplates(lctx, nil) {
			if err != nil || n >= 200 {
				break
			}
			n++
			raw, _ := json.Marshal(t)
			tpls = append(tpls, core.ResourceTemplate{URITemplate: t.URITemplate, Name: t.Name, Raw: raw})
		}
	}
	if caps.Prompts != nil {
		n := 0
		for pr, err := range p.cs.Prompts(lctx, nil) {
			if err != nil || n >= 400 {
				break
			}
			n++
			raw, _ := json.Marshal(pr)
			prompts = append(prompts, core.Prompt{Name: pr.Name, Raw: raw})
		}
	}
	s.hub.SetServerCatalog(p.src, p.server, res, tpls, prompts)
	s.syncServerCatalog()
	// A tool's view URI is routed to a resource of its page server
	// (apps.go): list the tools again with what the server lists now.
	go s.Synced(ctx)
}

func sourceMeta(meta mcp.Meta, src core.ServerProvenance) mcp.Meta {
	out := mcp.Meta{}
	for k, v := range meta {
		if len(k) < len(metaSourceKey) || k[:len(metaSourceKey)] != metaSourceKey {
			out[k] = v
		}
	}
	out[metaSourceKey] = src
	return out
}

// metaSourceKey is the _meta key of a routed entry's provenance.
const metaSourceKey = "webmcp-cdp/source"

// syncServerCatalog makes the go-sdk server's resources, templates and
// prompts equal to the hub's server catalog.
func (s *Server) syncServerCatalog() {
	c := &s.served
	c.mu.Lock()
	defer c.mu.Unlock()
	rs, ts, ps := s.hub.ServerCatalog()
	want := make(map[string]string, len(rs))
	for _, r := range rs {
		var mr mcp.Resource
		if json.Unmarshal(r.Resource.Raw, &mr) != nil {
			continue
		}
		mr.URI = r.URI
		mr.Meta = sourceMeta(mr.Meta, r.Source)
		raw, _ := json.Marshal(&mr)
		want[r.URI] = string(raw)
		if c.resources[r.URI] == string(raw) {
			continue
		}
		if !safeAdd(func() { s.mcp.AddResource(&mr, s.readPageResource) }) {
			delete(want, r.URI)
		}
	}
	gone := goneKeys(c.resources, want)
	if len(gone) > 0 {
		s.mcp.RemoveResources(gone...)
	}
	c.resources = want

	want = make(map[string]string, len(ts))
	for _, t := range ts {
		var mt mcp.ResourceTemplate
		if json.Unmarshal(t.Template.Raw, &mt) != nil {
			continue
		}
		mt.URITemplate = t.URITemplate
		mt.Meta = sourceMeta(mt.Meta, t.Source)
		raw, _ := json.Marshal(&mt)
		want[t.URITemplate] = string(raw)
		if c.templates[t.URITemplate] == string(raw) {
			continue
		}
		if !safeAdd(func() { s.mcp.AddResourceTemplate(&mt, s.readPageResource) }) {
			delete(want, t.URITemplate)
		}
	}
	gone = goneKeys(c.templates, want)
	if len(gone) > 0 {
		s.mcp.RemoveResourceTemplates(gone...)
	}
	c.templates = want

	want = make(map[string]string, len(ps))
	for _, p := range ps {
		var mp mcp.Prompt
		if json.Unmarshal(p.Prompt.Raw, &mp) != nil {
			continue
		}
		mp.Name = p.Name
		mp.Meta = sourceMeta(mp.Meta, p.Source)
		raw, _ := json.Marshal(&mp)
		want[p.Name] = string(raw)
		if c.prompts[p.Name] == string(raw) {
			continue
		}
		s.mcp.AddPrompt(&mp, s.getPagePrompt)
	}
	gone = goneKeys(c.prompts, want)
	if len(gone) > 0 {
		s.mcp.RemovePrompts(gone...)
	}
	c.prompts = want
}

// safeAdd runs an SDK add that panics on a URI or template it cannot
// parse (a page's bad declaration must not stop the process).
func safeAdd(f func()) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	f()
	return true
}

// sessionOf resolves a routed resource URI to its page server's session.
func (s *Server) sessionOf(uri string) (*pageSession, string, error) {
	key, orig, err := s.hub.ResolveURI(uri)
	if err != nil {
		return nil, "", err
	}
	p := s.pages.get(key)
	if p == nil {
		return nil, "", fmt.Errorf("the page server of %q has stopped; list resources again (resources/list)", uri)
	}
	return p, orig, nil
}

// readPageResource forwards resources/read to the page server and rewrites
// the URIs of the contents to their routed form.
func (s *Server) readPageResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	p, orig, err := s.sessionOf(req.Params.URI)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	read := func(ctx context.Context) (*mcp.ReadResourceResult, error) {
		meta, leave := p.relayMeta(ctx)
		defer leave()
		res, err := p.cs.ReadResource(ctx, &mcp.ReadResourceParams{Meta: meta, URI: orig})
		if err != nil {
			return nil, fmt.Errorf("the page server could not read %s: %w", orig, err)
		}
		return res, nil
	}
	cr := clientRequest{ctx: ctx, session: req.Session, caps: req.ClientCapabilities(), state: req.Params.RequestState, answers: req.Params.InputResponses, owner: hub.Caller(ctx)}
	res, ask, err := askable(s, cr, req.Params.URI, read)
	if err != nil {
		return nil, err
	}
	if ask != nil {
		return &mcp.ReadResourceResult{InputRequests: ask.asks, RequestState: ask.state}, nil
	}
	if res == nil {
		return nil, fmt.Errorf("the page server gave no result for %s", orig)
	}
	size := 0
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		size += len(c.Text) + len(c.Blob)
		if r := s.hub.RoutedURI(p.key, c.URI); c.URI != "" && r != "" {
			c.URI = r
		} else {
			c.URI = req.Params.URI
		}
	}
	if size > maxReadBytes {
		return nil, fmt.Errorf("the resource %s is %d bytes, over the limit of %d", req.Params.URI, size, maxReadBytes)
	}
	for _, c := range res.Contents {
		if c != nil {
			c.Meta = stripPageMeta(c.Meta, "a resource's contents", p, s.logger)
		}
	}
	res.Meta = sourceMeta(stripPageMeta(res.Meta, "a resource read", p, s.logger), core.ServerProvenance{Name: orig, Origin: p.src.Origin, URL: p.src.URL,
		Tab: s.hub.TabNumber(p.src.Tab), Backend: core.BackendMCPB, Channel: p.server.Channel, Kind: p.server.Kind})
	return res, nil
}

// getPagePrompt forwards prompts/get to the page server.
func (s *Server) getPagePrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	key, orig, err := s.hub.ResolvePrompt(req.Params.Name)
	if err != nil {
		return nil, err
	}
	p := s.pages.get(key)
	if p == nil {
		return nil, fmt.Errorf("the page server of the prompt %q has stopped; list prompts again (prompts/list)", req.Params.Name)
	}
	get := func(ctx context.Context) (*mcp.GetPromptResult, error) {
		meta, leave := p.relayMeta(ctx)
		defer leave()
		res, err := p.cs.GetPrompt(ctx, &mcp.GetPromptParams{Meta: meta, Name: orig, Arguments: req.Params.Arguments})
		if err != nil {
			return nil, fmt.Errorf("the page server could not give the prompt %s: %w", orig, err)
		}
		return res, nil
	}
	cr := clientRequest{ctx: ctx, session: req.Session, caps: req.ClientCapabilities(), state: req.Params.RequestState, answers: req.Params.InputResponses, owner: hub.Caller(ctx)}
	res, ask, err := askable(s, cr, req.Params.Name, get)
	if err != nil {
		return nil, err
	}
	if ask != nil {
		return &mcp.GetPromptResult{InputRequests: ask.asks, RequestState: ask.state}, nil
	}
	if res == nil {
		return nil, fmt.Errorf("the page server gave no prompt %s", orig)
	}
	if raw, _ := json.Marshal(res); len(raw) > maxReadBytes {
		return nil, fmt.Errorf("the prompt %s is %d bytes, over the limit of %d", req.Params.Name, len(raw), maxReadBytes)
	}
	res.Meta = stripPageMeta(res.Meta, "a prompt", p, s.logger)
	return res, nil
}

// subscribe forwards the first client subscription to a routed URI to the
// page server.
func (s *Server) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	p, orig, err := s.sessionOf(req.Params.URI)
	if err != nil {
		return err
	}
	c := &s.served
	c.mu.Lock()
	if c.subs == nil {
		c.subs = make(map[string]int)
	}
	c.subs[req.Params.URI]++
	first := c.subs[req.Params.URI] == 1
	c.mu.Unlock()
	if !first {
		return nil
	}
	if err := p.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: orig}); err != nil {
		c.mu.Lock()
		c.subs[req.Params.URI]--
		c.mu.Unlock()
		return fmt.Errorf("the page server refused the subscription to %s: %w", orig, err)
	}
	return nil
}

// unsubscribe forwards the last client unsubscription.
func (s *Server) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	c := &s.served
	c.mu.Lock()
	n := c.subs[req.Params.URI]
	if n <= 1 {
		delete(c.subs, req.Params.URI)
	} else {
		c.subs[req.Params.URI] = n - 1
	}
	c.mu.Unlock()
	if n != 1 {
		return nil
	}
	p, orig, err := s.sessionOf(req.Params.URI)
	if err != nil {
		return nil // the server is gone, and its subscriptions with it
	}
	return p.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: orig})
}

// pageResourceUpdated passes a page server's notifications/resources/updated
// on to the subscribed clients, with the routed URI.
func (s *Server) pageResourceUpdated(ctx context.Context, p *pageSession, uri string) {
	routed := s.hub.RoutedURI(p.key, uri)
	if routed == "" {
		return
	}
	s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: routed})
}

var _ hub.PageServerClient = (*pageSession)(nil)

// goneKeys lists the keys of old that want no longer has.
func goneKeys(old, want map[string]string) []string {
	var gone []string
	for k := range old {
		if _, ok := want[k]; !ok {
			gone = append(gone, k)
		}
	}
	return gone
}

// completePage forwards completion/complete for a page server's prompt or
// resource template to its page server. A page server that offers no
// completions (or a reference it does not know) gets no values, not an
// error: completions are suggestions.
func (s *Server) completePage(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	none := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	ref := req.Params.Ref
	if ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete needs a ref (ref/prompt or ref/resource)"}
	}
	var key, orig string
	var err error
	switch ref.Type {
	case "ref/prompt":
		key, orig, err = s.hub.ResolvePrompt(ref.Name)
	case "ref/resource":
		key, orig, err = s.hub.ResolveURI(ref.URI)
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("completion/complete: unknown ref type %q (use ref/prompt or ref/resource)", ref.Type)}
	}
	if err != nil {
		return none, nil
	}
	p := s.pages.get(key)
	if p == nil || p.cs.InitializeResult().Capabilities == nil || p.cs.InitializeResult().Capabilities.Completions == nil {
		return none, nil
	}
	fwd := *ref
	if fwd.Type == "ref/prompt" {
		fwd.Name = orig
	} else {
		fwd.URI = orig
	}
	res, err := p.cs.Complete(ctx, &mcp.CompleteParams{Ref: &fwd, Argument: req.Params.Argument, Context: req.Params.Context})
	if err != nil {
		return nil, fmt.Errorf("the page server could not complete %s: %w", req.Params.Argument.Name, err)
	}
	if len(res.Completion.Values) > 100 {
		res.Completion.Values, res.Completion.HasMore = res.Completion.Values[:100], true
	}
	if res.Completion.Values == nil {
		res.Completion.Values = []string{}
	}
	return res, nil
}
