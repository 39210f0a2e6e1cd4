package hub

import (
	"strings"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pat, s string
		want   bool
	}{
		{"https://example.com", "https://example.com", true},
		{"https://example.com", "https://example.com:8443", false},
		{"https://*.example.com", "https://a.example.com", true},
		{"https://*.example.com", "https://a.b.example.com", true},
		{"https://*.example.com", "https://example.com", false},
		{"https://*.example.com", "https://a.example.com.evil.net", false},
		{"https://*.example.com", "https://evilexample.com", false},
		{"https://*.example.com", "http://a.example.com", false},
		{"http://127.0.0.1:*", "http://127.0.0.1:8080", true},
		{"http://127.0.0.1:*", "http://127.0.0.10:8080", false},
		{"http://[::1]:*", "http://[::1]:9000", true},
		{"*", "null", true},
		{"*://*", "file://", true},
		{"https://*.*.com", "https://a.b.com", true},
		{"https://*.*.com", "https://ab.com", false},
		{"a*a", "a", false},
		{"a*a", "aa", true},
	}
	for _, tt := range tests {
		if got := globMatch(tt.pat, tt.s); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tt.pat, tt.s, got, tt.want)
		}
	}
}

func TestOriginPolicy(t *testing.T) {
	tests := []struct {
		name        string
		allow, deny []string
		allowed     []string
		denied      []string
	}{
		{name: "no patterns", allowed: []string{"https://a.com", "null", "file://"}},
		{
			name:    "allow list",
			allow:   []string{"https://*.example.com", "http://127.0.0.1:*"},
			allowed: []string{"https://app.example.com", "http://127.0.0.1:3000", "HTTPS://APP.EXAMPLE.COM"},
			denied:  []string{"https://example.org", "http://localhost:3000", "null"},
		},
		{
			name:    "deny wins",
			allow:   []string{"https://*.example.com"},
			deny:    []string{"https://ads.example.com"},
			allowed: []string{"https://app.example.com"},
			denied:  []string{"https://ads.example.com"},
		},
		{
			name:    "deny only",
			deny:    []string{"https://*.tracker.net", "null"},
			allowed: []string{"https://example.com"},
			denied:  []string{"https://x.tracker.net", "null"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewOriginPolicy(tt.allow, tt.deny)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range tt.allowed {
				if !p.Allows(o) {
					t.Errorf("%q is denied, want allowed", o)
				}
			}
			for _, o := range tt.denied {
				if p.Allows(o) {
					t.Errorf("%q is allowed, want denied", o)
				}
			}
		})
	}
	var nilPolicy *OriginPolicy
	if !nilPolicy.Allows("https://a.com") {
		t.Error("a nil policy denies")
	}
}

func TestOriginPatternErrors(t *testing.T) {
	tests := []struct {
		pat, want string
	}{
		{"", "empty"},
		{"example.com", "scheme://host"},
		{"https://example.com/path", "no path"},
		{"https://example.com?q", "no path"},
	}
	for _, tt := range tests {
		_, err := NewOriginPolicy([]string{tt.pat}, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "--allow-origin") {
			t.Errorf("NewOriginPolicy(%q) error = %v, want one naming --allow-origin and saying %q", tt.pat, err, tt.want)
		}
	}
}

// budgetStep takes n names at t0+at and wants want of them.
type budgetStep struct {
	at   time.Duration
	n    int
	want int
}

func TestRegistrationBudget(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name      string
		perMinute int
		steps     []budgetStep
	}{
		{"sixty a minute", 60, []budgetStep{
			{0, 40, 40},                  // starts full (60)
			{0, 40, 20},                  // 20 left: as many as there are
			{0, 5, 0},                    // empty
			{30 * time.Second, 40, 30},   // half a minute refills half
			{10 * time.Minute, 100, 60},  // never above the burst
			{10 * time.Minute, 1, 0},     // empty again at the same moment
			{-time.Minute, 1, 0},         // a clock going back gives nothing
			{11 * time.Minute, 1000, 60}, // a full minute later: full
		}},
		{"the default, a thousand a minute", DefaultRegistrationsPerMinute, []budgetStep{
			{0, 5000, 1000},             // the whole burst
			{time.Second, 100, 16},      // 1000/60 a second
			{time.Minute, 5000, 984},    // refilled to the burst, less the 16
			{2 * time.Minute, 1, 1},     // a name costs one
			{2 * time.Minute, 999, 999}, // the rest
			{3 * time.Minute, 1000, 1000},
		}},
		{"one a minute", 1, []budgetStep{
			{0, 2, 1},
			{59 * time.Second, 1, 0},
			{time.Minute, 1, 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := newRegistrationBudget(tt.perMinute)
			for i, s := range tt.steps {
				if got := takeUpTo(lim, s.n, t0.Add(s.at)); got != s.want {
					t.Errorf("step %d: take(%d) at +%s = %d, want %d", i, s.n, s.at, got, s.want)
				}
			}
		})
	}
}

func TestCheckTool(t *testing.T) {
	l := Limits{DescriptionBytes: 10, SchemaBytes: 60, NameLength: 5}
	l.defaults()
	tests := []struct {
		name       string
		tool       core.Tool
		wantReason string // substring; "" when admitted
		wantSchema string // when admitted
	}{
		{"fine", core.Tool{Name: "ok", Description: "d"}, "", ""},
		{"empty name", core.Tool{Description: "d"}, "name is empty", ""},
		{"long name", core.Tool{Name: "toolong", Description: "d"}, "name is 7 bytes, over the limit of 5", ""},
		{"empty description", core.Tool{Name: "ok"}, "description is empty", ""},
		{"long description", core.Tool{Name: "ok", Description: "ééééééé"}, "description is 14 bytes, over the limit of 10", ""},
		{"big schema", core.Tool{Name: "ok", Description: "d", InputSchema: []byte(`{"type":"object","properties":{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa":{}}}`)}, "inputSchema is 74 bytes, over the limit of 60", ""},
		{"schema not an object", core.Tool{Name: "ok", Description: "d", InputSchema: []byte(`[1]`)}, "not a JSON object", ""},
		{"schema of another type", core.Tool{Name: "ok", Description: "d", InputSchema: []byte(`{"type":"string"}`)}, "has type string", ""},
		{"schema without a type", core.Tool{Name: "ok", Description: "d", InputSchema: []byte(`{"properties":{}}`)}, "", `{"properties":{},"type":"object"}`},
		{"name with a space", core.Tool{Name: "a b", Description: "d"}, "characters other than", ""},
		{"long title", core.Tool{Name: "ok", Description: "d", Title: strings.Repeat("t", 2000)}, "title is 2000 bytes", ""},
		{"object schema kept", core.Tool{Name: "ok", Description: "d", InputSchema: []byte(`{"type":"object"}`)}, "", `{"type":"object"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, reason := l.checkTool(tt.tool)
			if tt.wantReason == "" {
				if reason != "" {
					t.Fatalf("refused: %s", reason)
				}
				if string(got.InputSchema) != tt.wantSchema {
					t.Errorf("schema = %s, want %s", got.InputSchema, tt.wantSchema)
				}
				return
			}
			if !strings.Contains(reason, tt.wantReason) {
				t.Errorf("reason = %q, want it to contain %q", reason, tt.wantReason)
			}
		})
	}
}
