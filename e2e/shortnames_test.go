package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpbFixture is a page server with the names the MCP conformance suite
// calls (test_simple_text, test://static-text, test_simple_prompt) and a
// resource template; each answer says which origin gave it.
const mcpbFixture = `
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/server";
import { TabServerTransport } from "@mcp-b/transports";

const from = " from " + location.origin;
const server = new McpServer({ name: "fixture", version: "1.0.0" });
server.registerTool("test_simple_text", { description: "Returns simple text" },
  async () => ({ content: [{ type: "text", text: "simple text" + from }] }));
server.registerResource("static-text", "test://static-text", { description: "Static text", mimeType: "text/plain" },
  async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "static text" + from }] }));
server.registerResource("data", new ResourceTemplate("test://template/{id}/data", { list: undefined }),
  { description: "Data by id" },
  async (uri, { id }) => ({ contents: [{ uri: uri.href, text: "data " + id + from }] }));
server.registerPrompt("test_simple_prompt", { description: "A simple prompt" },
  () => ({ messages: [{ role: "user", content: { type: "text", text: "simple prompt" + from } }] }));
server.connect(new TabServerTransport({ allowedOrigins: [window.location.origin] }));
`

// siteOfURL is the site part of routed names for a test server's URL.
func siteOfURL(base string) string {
	return strings.NewReplacer(".", "_", ":", "_").Replace(strings.TrimPrefix(base, "http://"))
}

// TestShortNames: with --tool-names short a WebMCP tool and an MCP-B page
// server's tool, resource, template and prompt keep the page's own names;
// when a second site offers the same, both fall back to the site's names
// with list_changed, and they stay so after the second site's tab closes.
func TestShortNames(t *testing.T) {
	t.Parallel()
	// One bundle, served from two origins.
	dir := t.TempDir()
	for name, body := range map[string]string{
		"bundle.js":  bundle(t, mcpbFixture),
		"index.html": `<!doctype html><title>fixture</title><body><script src="bundle.js"></script></body>`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var servers []string
	for range 2 {
		srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
		t.Cleanup(srv.Close)
		servers = append(servers, srv.URL)
	}
	p1, p2 := servers[0], servers[1]
	n1, n2 := serveFixtures(t), serveFixtures(t)

	resChanged := make(chan struct{}, 64)
	promptsChanged := make(chan struct{}, 64)
	c := startWith(t, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resChanged <- struct{}{} },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { promptsChanged <- struct{}{} },
	}, "launch", "--headless", "--tool-names", "short", "--state-dir", t.TempDir(), n1+"/notes/", p1+"/index.html")

	has := func(want ...string) func(map[string]*mcp.Tool) bool {
		return func(tools map[string]*mcp.Tool) bool {
			for _, w := range want {
				if tools[w] == nil {
					return false
				}
			}
			return true
		}
	}
	c.waitFor("add_note and test_simple_text under their own names", has("add_note", "test_simple_text"))
	if got := c.callOK("add_note", map[string]any{"title": "t", "content": "c"}); !strings.Contains(got, "Added note") {
		t.Errorf("add_note = %q", got)
	}
	if got := c.callOK("test_simple_text", map[string]any{}); got != "simple text from "+p1 {
		t.Errorf("test_simple_text = %q", got)
	}
	ctx := ctxFor(t, 60*time.Second)
	read := func(uri string) (string, error) {
		res, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return "", err
		}
		if len(res.Contents) != 1 || res.Contents[0].URI != uri {
			t.Errorf("resources/read %s: contents %+v, want one with the URI read", uri, res.Contents)
			return "", nil
		}
		return res.Contents[0].Text, nil
	}
	prompt := func(name string) (string, error) {
		res, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name})
		if err != nil {
			return "", err
		}
		tc, _ := res.Messages[0].Content.(*mcp.TextContent)
		if tc == nil {
			return "", nil
		}
		return tc.Text, nil
	}
	listed := func() (res, tpls, prompts []string) {
		for r, err := range c.cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			res = append(res, r.URI)
		}
		for r, err := range c.cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			tpls = append(tpls, r.URITemplate)
		}
		for p, err := range c.cs.Prompts(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			prompts = append(prompts, p.Name)
		}
		return
	}
	// The page server's catalog follows its tools: wait until it is there
	// (each change of it comes with resources/list_changed).
	deadline := time.After(20 * time.Second)
catalog:
	for {
		if res, _, _ := listed(); slices.Contains(res, "test://static-text") {
			break
		}
		select {
		case <-resChanged:
		case <-deadline:
			break catalog
		}
	}
	res, tpls, prompts := listed()
	if !slices.Equal(res, []string{"test://static-text"}) || !slices.Equal(tpls, []string{"test://template/{id}/data"}) || !slices.Equal(prompts, []string{"test_simple_prompt"}) {
		t.Fatalf("short names: resources %q, templates %q, prompts %q", res, tpls, prompts)
	}
	if got, err := read("test://static-text"); err != nil || got != "static text from "+p1 {
		t.Errorf("read test://static-text = %q, %v", got, err)
	}
	if got, err := read("test://template/7/data"); err != nil || got != "data 7 from "+p1 {
		t.Errorf("read test://template/7/data = %q, %v", got, err)
	}
	if got, err := prompt("test_simple_prompt"); err != nil || got != "simple prompt from "+p1 {
		t.Errorf("test_simple_prompt = %q, %v", got, err)
	}

	// A second site with the same tools, resource and prompt: both fall
	// back, and the clients hear of it.
	c.drainChanges()
	for len(resChanged) > 0 {
		<-resChanged
	}
	for len(promptsChanged) > 0 {
		<-promptsChanged
	}
	c.callOK("webmcp_open_tab", map[string]any{"url": n2 + "/notes/"})
	c.callOK("webmcp_open_tab", map[string]any{"url": p2 + "/index.html"})
	c.waitChange("a second site came to offer add_note and test_simple_text")
	s1, s2, sp1, sp2 := siteOfURL(n1), siteOfURL(n2), siteOfURL(p1), siteOfURL(p2)
	fellBack := []string{s1 + "_add_note", s2 + "_add_note", sp1 + "_test_simple_text", sp2 + "_test_simple_text"}
	tools := c.waitFor("the site names after the clash", has(fellBack...))
	for _, own := range []string{"add_note", "test_simple_text"} {
		if tools[own] != nil {
			t.Errorf("%s is still listed after a second site offered it", own)
		}
		if res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: own, Arguments: map[string]any{}}); err == nil && !res.IsError {
			t.Errorf("calling %s after the clash worked: %s", own, text(res))
		}
	}
	if got := c.callOK(sp2+"_test_simple_text", map[string]any{}); got != "simple text from "+p2 {
		t.Errorf("%s_test_simple_text = %q", sp2, got)
	}
	if got := c.callOK(sp1+"_test_simple_text", map[string]any{}); got != "simple text from "+p1 {
		t.Errorf("%s_test_simple_text = %q", sp1, got)
	}
	if src := source(t, tools[s2+"_add_note"]); src["origin"] != n2 {
		t.Errorf("%s_add_note goes to %v, want %s", s2, src["origin"], n2)
	}
	for what, ch := range map[string]chan struct{}{"resources": resChanged, "prompts": promptsChanged} {
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("no %s/list_changed after the clash", what)
		}
	}
	tabOf := map[string]int{}
	for _, tb := range c.tabs() {
		for _, base := range []string{n2, p1, p2} {
			if strings.HasPrefix(tb.URL, base+"/") {
				tabOf[base] = tb.Tab
			}
		}
	}
	t1, t2 := "tab"+strconv.Itoa(tabOf[p1]), "tab"+strconv.Itoa(tabOf[p2])
	r1 := "webmcp://" + sp1 + "/" + t1 + "/test://static-text"
	r2 := "webmcp://" + sp2 + "/" + t2 + "/test://static-text"
	wantRes := []string{r1, r2}
	slices.Sort(wantRes)
	wantPrompts := []string{sp1 + "_" + t1 + "_test_simple_prompt", sp2 + "_" + t2 + "_test_simple_prompt"}
	slices.Sort(wantPrompts)
	deadline = time.After(20 * time.Second)
clash:
	for {
		res, _, prompts = listed()
		if slices.Equal(res, wantRes) && slices.Equal(prompts, wantPrompts) {
			break
		}
		select {
		case <-resChanged:
		case <-promptsChanged:
		case <-deadline:
			break clash
		}
	}
	res, tpls, prompts = listed()
	if !slices.Equal(res, wantRes) || !slices.Equal(prompts, wantPrompts) || slices.Contains(tpls, "test://template/{id}/data") {
		t.Fatalf("after the clash: resources %q (want %q), templates %q, prompts %q (want %q)", res, wantRes, tpls, prompts, wantPrompts)
	}
	if _, err := read("test://static-text"); err == nil {
		t.Error("test://static-text was read after the clash")
	}
	if _, err := prompt("test_simple_prompt"); err == nil {
		t.Error("test_simple_prompt was given after the clash")
	}
	if got, err := read(r2); err != nil || got != "static text from "+p2 {
		t.Errorf("read %s = %q, %v", r2, got, err)
	}
	if got, err := prompt(wantPrompts[0]); err != nil || !strings.HasPrefix(got, "simple prompt from ") {
		t.Errorf("%s = %q, %v", wantPrompts[0], got, err)
	}

	// The second site's tabs close: the first keeps its site names (names
	// do not change back under a living tab).
	c.callOK("webmcp_close_tab", map[string]any{"tab": tabOf[p2]})
	c.callOK("webmcp_close_tab", map[string]any{"tab": tabOf[n2]})
	tools = c.waitFor("the second site's tools gone", func(tools map[string]*mcp.Tool) bool {
		return tools[s2+"_add_note"] == nil && tools[sp2+"_test_simple_text"] == nil
	})
	for _, n := range []string{s1 + "_add_note", sp1 + "_test_simple_text"} {
		if tools[n] == nil {
			t.Errorf("%s is gone after the other site's tab closed; tools: %v", n, names(tools))
		}
	}
	if tools["add_note"] != nil || tools["test_simple_text"] != nil {
		t.Errorf("a name went back to short under a living tab; tools: %v", names(tools))
	}
	res, _, prompts = listed()
	if !slices.Equal(res, []string{r1}) || !slices.Equal(prompts, []string{sp1 + "_" + t1 + "_test_simple_prompt"}) {
		t.Errorf("after the second site left: resources %q, prompts %q", res, prompts)
	}
}
