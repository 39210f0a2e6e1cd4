package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

func TestLimitsRefuseToolsAndKeepTheRest(t *testing.T) {
	limits := hub.Limits{ToolsPerDocument: 4, DescriptionBytes: 20, SchemaBytes: 100, NameLength: 10}
	tests := []struct {
		name       string
		tool       core.Tool
		wantLogged string
	}{
		{"long description", core.Tool{Name: "big", Description: strings.Repeat("x", 21)}, "its description is 21 bytes, over the limit of 20"},
		{"big schema", core.Tool{Name: "big", Description: "d", InputSchema: json.RawMessage(`{"type":"object","description":"` + strings.Repeat("x", 100) + `"}`)}, "over the limit of 100"},
		{"long name", core.Tool{Name: "a_very_long_name", Description: "d"}, "its name is 16 bytes, over the limit of 10"},
		{"schema not of type object", core.Tool{Name: "big", Description: "d", InputSchema: json.RawMessage(`{"type":"array"}`)}, "MCP tools take an object"},
		{"empty description", core.Tool{Name: "big"}, "its description is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log logBuffer
			b := &fakeBrowser{}
			h := hub.New(b, hub.Options{Limits: limits, Logger: log.logger()})
			tools := append(mkTools("ok1"), tt.tool)
			tools = append(tools, mkTools("ok2")...)
			h.Update(mkDoc("a", "A", origin), tools, nil)
			if got, want := names(h), []string{site + "_ok1", site + "_ok2"}; !reflect.DeepEqual(got, want) {
				t.Errorf("names = %q, want %q", got, want)
			}
			if !strings.Contains(log.String(), "refused a tool") || !strings.Contains(log.String(), tt.wantLogged) {
				t.Errorf("log = %q, want a refusal saying %q", log.String(), tt.wantLogged)
			}
			if r := h.Call(context.Background(), site+"_ok2", nil); r.IsError {
				t.Errorf("a well-behaved tool of the page failed: %s", text(t, r))
			}
		})
	}
}

func TestToolsPerDocument(t *testing.T) {
	var log logBuffer
	h := hub.New(&fakeBrowser{}, hub.Options{Limits: hub.Limits{ToolsPerDocument: 3}, Logger: log.logger()})
	var many []string
	for i := range 50 {
		many = append(many, fmt.Sprintf("t%02d", i))
	}
	h.Update(mkDoc("a", "A", origin), mkTools(many...), nil)
	if got, want := names(h), []string{site + "_t00", site + "_t01", site + "_t02"}; !reflect.DeepEqual(got, want) {
		t.Errorf("names = %q, want the first three the page registered %q", got, want)
	}
	if !strings.Contains(log.String(), "47 tools over the limit of 3 per document") {
		t.Errorf("log = %q, want the overflow logged", log.String())
	}
	// Another document in the same tab has its own limit.
	h.Update(mkDoc("a2", "A", "https://other.example"), mkTools("x"), nil)
	if len(names(h)) != 4 {
		t.Errorf("names = %q, want the other document's tool too", names(h))
	}
	// Refusals are logged once.
	before := strings.Count(log.String(), "refused a tool")
	h.Update(mkDoc("a", "A", origin), mkTools(many...), nil)
	if after := strings.Count(log.String(), "refused a tool"); after != before {
		t.Errorf("the same refusal was logged again (%d, then %d lines)", before, after)
	}
}

func TestRegistrationRate(t *testing.T) {
	var log logBuffer
	h := hub.New(&fakeBrowser{}, hub.Options{Limits: hub.Limits{RegistrationsPerMinute: 10}, Logger: log.logger()})
	batch := func(prefix string, n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("%s%02d", prefix, i))
		}
		return out
	}
	// Eight new names: within the budget.
	h.Update(mkDoc("a", "A", origin), mkTools(batch("a", 8)...), nil)
	if n := len(names(h)); n != 8 {
		t.Fatalf("%d tools listed, want 8", n)
	}
	// Reloading with the same names costs nothing.
	h.DropDoc("a")
	h.Update(mkDoc("a-reloaded", "A", origin), mkTools(batch("a", 8)...), nil)
	if n := len(names(h)); n != 8 {
		t.Fatalf("after a reload, %d tools listed, want the same 8", n)
	}
	// Eight more new names: only two fit; the known ones stay.
	h.Update(mkDoc("a-reloaded", "A", origin), mkTools(append(batch("a", 8), batch("b", 8)...)...), nil)
	got := names(h)
	sort.Strings(got)
	if len(got) != 10 || !strings.HasSuffix(got[7], "_a07") || !strings.HasSuffix(got[9], "_b01") {
		t.Errorf("names = %q, want a00-a07 and b00-b01", got)
	}
	if !strings.Contains(log.String(), "6 new tools: the tab registered more than 10 new tool names in a minute") {
		t.Errorf("log = %q, want the rate refusal", log.String())
	}
	// Another tab has its own budget.
	h.Update(mkDoc("c", "C", origin), mkTools(batch("c", 10)...), nil)
	if n := len(names(h)); n != 20 {
		t.Errorf("%d tools listed after another tab registered 10, want 20", n)
	}
}

func TestDeniedOriginsNeverEnter(t *testing.T) {
	policy, err := hub.NewOriginPolicy([]string{"http://127.0.0.1:*", "https://*.example.com"}, []string{"https://ads.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	var log logBuffer
	b := &fakeBrowser{}
	h := hub.New(b, hub.Options{Origins: policy, Logger: log.logger()})
	h.Update(mkDoc("a", "A", origin), mkTools("ok"), nil)
	h.Update(mkDoc("b", "B", "https://ads.example.com"), mkTools("track"), nil)
	h.Update(mkDoc("c", "C", "https://evil.test"), mkTools("steal"), nil)
	h.Update(mkDoc("d", "A", "https://app.example.com"), mkTools("app"), nil)
	if got, want := names(h), []string{site + "_ok", "app_example_com_app"}; !reflect.DeepEqual(got, want) {
		t.Errorf("names = %q, want only the allowed origins' %q", got, want)
	}
	if v := h.Version(); v != 2 {
		t.Errorf("%d catalog changes, want 2 (denied origins change nothing)", v)
	}
	refused, _ := h.Refusals(0)
	var denied []string
	for _, r := range refused {
		if r.Reason == core.ReasonOrigin {
			denied = append(denied, r.Origin)
		}
	}
	if want := []string{"https://ads.example.com", "https://evil.test"}; !reflect.DeepEqual(denied, want) {
		t.Errorf("origin refusals %q, want %q", denied, want)
	}
	if r := h.Call(context.Background(), "ads_example_com_track", nil); !r.IsError || b.count() != 0 {
		t.Errorf("a denied origin's tool was reachable: %+v", r)
	}
	if !strings.Contains(log.String(), "ignoring the tools of a denied origin") {
		t.Errorf("log = %q, want the denial logged", log.String())
	}
	if tabs := h.Tabs(); len(tabs) != 1 {
		t.Errorf("tabs = %+v, want only tab A (denied pages get no tab entry from their tools)", tabs)
	}
}
