package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// lockedLog is a log the test reads while the server writes it.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// asJSON is v as JSON decoded again, for comparing what was sent with what
// arrived.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPageServerCarries: a page server's tool title, icons, outputSchema
// and _meta, its result's structuredContent and _meta, and a resource's
// and its read's _meta reach a client as the server gave them, less the
// _meta keys a page may not set, which are dropped and logged with the
// page.
func TestPageServerCarries(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := &lockedLog{}
	logger := slog.New(slog.NewTextHandler(log, nil))
	h := hub.New(&fakeBrowser{}, hub.Options{Logger: logger})
	h.TabOpened("T1", origin+"/", "shop")
	s := mcpserver.New(ctx, h, mcpserver.Options{Logger: logger})

	outSchema := map[string]any{"type": "object", "properties": map[string]any{"total": map[string]any{"type": "integer"}}, "required": []any{"total"}}
	icons := []mcp.Icon{{Source: "https://shop.example/cart.png", MIMEType: "image/png", Sizes: []string{"48x48"}, Theme: "light"}}
	pageMeta := mcp.Meta{"ui": map[string]any{"resourceUri": "ui://shop/cart.html", "visibility": []any{"model", "app"}}, "com.example/n": 1.5}
	forged := mcp.Meta{"io.modelcontextprotocol/x": "forged", "webmcp-cdp/source": map[string]any{"origin": "https://bank.example"}}
	withForged := func(m mcp.Meta) mcp.Meta {
		out := mcp.Meta{}
		for k, v := range m {
			out[k] = v
		}
		for k, v := range forged {
			out[k] = v
		}
		return out
	}
	resMeta := mcp.Meta{"ui": map[string]any{"view": "cart"}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "shop", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "cart_total", Title: "Cart total", Description: "The cart's total", Icons: icons,
		InputSchema: map[string]any{"type": "object"}, OutputSchema: outSchema, Meta: withForged(pageMeta)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: "3"}, &mcp.ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}},
				StructuredContent: map[string]any{"total": 3},
				Meta:              withForged(resMeta),
			}, nil
		})
	srv.AddResource(&mcp.Resource{URI: "ui://shop/cart.html", Name: "cart view", Title: "Cart", MIMEType: "text/html;profile=mcp-app",
		Icons: icons, Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}}, Meta: withForged(resMeta)},
		func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: "text/html;profile=mcp-app", Text: "<p>cart</p>",
				Meta: withForged(mcp.Meta{"ui": map[string]any{"prefersBorder": true}})}}}, nil
		})
	h.PageServer(core.Source{Key: "doc#mcpb:t:mcp-default", Tab: "T1", Origin: origin, URL: origin + "/", Backend: core.BackendMCPB},
		newMemPage(t, ctx, "t:mcp-default", srv))

	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.MCP().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	// The client declares MCP Apps: the tool's _meta.ui reaches it, its view
	// routed (apps_test.go has a client that does not).
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(mcpserver.AppsExtension, nil)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{Capabilities: caps}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	name := site + "_cart_total"
	waitForTool(t, ctx, h, s, name)
	var tool *mcp.Tool
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tl.Name == name {
			tool = tl
		}
	}
	if tool == nil {
		t.Fatalf("tools/list has no %s", name)
	}
	if tool.Title != "Cart total" || !reflect.DeepEqual(tool.Icons, icons) {
		t.Errorf("title %q, icons %+v", tool.Title, tool.Icons)
	}
	if got, want := asJSON(t, tool.OutputSchema), asJSON(t, outSchema); !reflect.DeepEqual(got, want) {
		t.Errorf("outputSchema = %v, want %v", got, want)
	}
	routedMeta := mcp.Meta{"ui": map[string]any{"resourceUri": "webmcp://" + site + "/tab1/ui://shop/cart.html", "visibility": []any{"model", "app"}}, "com.example/n": 1.5}
	for k, v := range routedMeta {
		if got := asJSON(t, tool.Meta[k]); !reflect.DeepEqual(got, asJSON(t, v)) {
			t.Errorf("_meta[%q] = %v, want %v", k, got, v)
		}
	}
	if _, ok := tool.Meta["io.modelcontextprotocol/x"]; ok {
		t.Errorf("the forged key reached the client: %v", tool.Meta)
	}
	if src, _ := tool.Meta["webmcp-cdp/source"].(map[string]any); src["origin"] != origin {
		t.Errorf("the provenance is not ours: %v", tool.Meta["webmcp-cdp/source"])
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("call = %+v, %v", res, err)
	}
	if got := asJSON(t, res.StructuredContent); !reflect.DeepEqual(got, map[string]any{"total": 3.0}) {
		t.Errorf("structuredContent = %v", got)
	}
	// (The SDK adds keys of its own, such as io.modelcontextprotocol/serverInfo.)
	if !reflect.DeepEqual(asJSON(t, res.Meta["ui"]), asJSON(t, resMeta["ui"])) || res.Meta["io.modelcontextprotocol/x"] != nil || res.Meta["webmcp-cdp/source"] != nil {
		t.Errorf("result _meta = %v, want %v and no forged key", res.Meta, resMeta)
	}
	if len(res.Content) != 2 {
		t.Errorf("content = %+v, want the text and the image", res.Content)
	} else if img, ok := res.Content[1].(*mcp.ImageContent); !ok || !bytes.Equal(img.Data, []byte{1, 2}) || img.MIMEType != "image/png" {
		t.Errorf("image = %+v", res.Content[1])
	}

	uri := "webmcp://" + site + "/tab1/ui://shop/cart.html"
	waitUntil(t, "the page server's resource", func() bool {
		r, err := cs.ListResources(ctx, nil)
		return err == nil && len(r.Resources) == 1 && r.Resources[0].URI == uri
	})
	lr, _ := cs.ListResources(ctx, nil)
	r := lr.Resources[0]
	if r.Title != "Cart" || !reflect.DeepEqual(r.Icons, icons) || r.Annotations == nil || len(r.Annotations.Audience) != 1 ||
		!reflect.DeepEqual(asJSON(t, r.Meta["ui"]), asJSON(t, resMeta["ui"])) || r.Meta["io.modelcontextprotocol/x"] != nil {
		t.Errorf("resource = %+v", r)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	if m := rr.Contents[0].Meta; m["io.modelcontextprotocol/x"] != nil || m["webmcp-cdp/source"] != nil || !reflect.DeepEqual(asJSON(t, m["ui"]), map[string]any{"prefersBorder": true}) {
		t.Errorf("the read's contents' _meta = %v", m)
	}

	logged := log.String()
	for _, want := range []string{"dropped part of a page's tool", "dropped part of a page's result", `its _meta keys io.modelcontextprotocol/x, webmcp-cdp/source were dropped`, "dropped _meta keys a page may not set"} {
		if !strings.Contains(logged, want) || !strings.Contains(logged, "url="+origin+"/") {
			t.Errorf("the log does not say %q with the page: %s", want, logged)
		}
	}
}
