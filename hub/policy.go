package hub

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Limits bound what one page can put into the catalog. A tool over a limit
// is refused with a logged reason; the page's other tools stay. Zero values
// take the defaults.
type Limits struct {
	// ToolsPerDocument is the most tools taken from one document (default
	// 200); the rest are refused.
	ToolsPerDocument int
	// DescriptionBytes is the longest description, in bytes (default 16 KiB).
	DescriptionBytes int
	// SchemaBytes is the longest inputSchema, in bytes of JSON (default 64 KiB).
	SchemaBytes int
	// NameLength is the longest tool name a page may use, in bytes (default
	// 128, the WebMCP maximum).
	NameLength int
	// RegistrationsPerMinute bounds the tool names new to a tab that it may
	// register per minute (default 1000). A reload that registers the same
	// names again costs nothing; a page that keeps inventing names is
	// refused its new tools until the budget refills.
	RegistrationsPerMinute int
}

// Default limits.
const (
	DefaultToolsPerDocument       = 200
	DefaultDescriptionBytes       = 16 << 10
	DefaultSchemaBytes            = 64 << 10
	DefaultNameLength             = 128
	DefaultRegistrationsPerMinute = 1000
)

func (l *Limits) defaults() {
	if l.ToolsPerDocument <= 0 {
		l.ToolsPerDocument = DefaultToolsPerDocument
	}
	if l.DescriptionBytes <= 0 {
		l.DescriptionBytes = DefaultDescriptionBytes
	}
	if l.SchemaBytes <= 0 {
		l.SchemaBytes = DefaultSchemaBytes
	}
	if l.NameLength <= 0 {
		l.NameLength = DefaultNameLength
	}
	if l.RegistrationsPerMinute <= 0 {
		l.RegistrationsPerMinute = DefaultRegistrationsPerMinute
	}
}

// toolNameRE is WebMCP's rule for a tool name.
var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// Bounds on the parts of a tool that have no limit of their own.
const (
	maxTitleBytes      = 1024
	maxAnnotations     = 16
	maxAnnotationKey   = 64
	maxAnnotationBytes = 256
)

// checkTool is the admission of one tool: it applies the per-tool limits,
// WebMCP's name rule, and normalises the input schema (MCP requires type
// "object"; a schema without a type gets it) and the annotations (bounded in
// number and size). It returns the tool to list, or the reason code and the
// words of its refusal.
func (l *Limits) checkTool(t core.Tool) (core.Tool, core.Reason, string) {
	switch {
	case t.Name == "":
		return t, core.ReasonName, "its name is empty"
	case len(t.Name) > l.NameLength:
		return t, core.ReasonName, fmt.Sprintf("its name is %d bytes, over the limit of %d", len(t.Name), l.NameLength)
	case !toolNameRE.MatchString(t.Name):
		return t, core.ReasonName, "its name has characters other than A-Z a-z 0-9 _ . -"
	case t.Description == "":
		return t, core.ReasonDescription, "its description is empty"
	case len(t.Description) > l.DescriptionBytes:
		return t, core.ReasonSize, fmt.Sprintf("its description is %d bytes, over the limit of %d", len(t.Description), l.DescriptionBytes)
	case len(t.Title) > maxTitleBytes:
		return t, core.ReasonSize, fmt.Sprintf("its title is %d bytes, over the limit of %d", len(t.Title), maxTitleBytes)
	case len(t.InputSchema) > l.SchemaBytes:
		return t, core.ReasonSize, fmt.Sprintf("its inputSchema is %d bytes, over the limit of %d", len(t.InputSchema), l.SchemaBytes)
	}
	if len(t.InputSchema) > 0 {
		s, reason := objectSchema(t.InputSchema)
		if reason != "" {
			return t, core.ReasonSchema, reason
		}
		t.InputSchema = s
		if why := checkHeaderAnnotations(s); why != "" {
			return t, core.ReasonSchema, why
		}
	}
	t.Annotations = boundAnnotations(t.Annotations)
	return l.checkCarried(t)
}

// boundAnnotations keeps at most maxAnnotations hints with short keys, and
// drops long string values.
func boundAnnotations(a map[string]any) map[string]any {
	if len(a) == 0 {
		return a
	}
	ok := len(a) <= maxAnnotations
	for k, v := range a {
		if s, isStr := v.(string); len(k) > maxAnnotationKey || isStr && len(s) > maxAnnotationBytes {
			ok = false
			break
		}
	}
	if ok {
		return a
	}
	out := make(map[string]any, min(len(a), maxAnnotations))
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := a[k]
		if s, isStr := v.(string); len(k) > maxAnnotationKey || isStr && len(s) > maxAnnotationBytes {
			continue
		}
		if len(out) == maxAnnotations {
			break
		}
		out[k] = v
	}
	return out
}

// objectSchema checks that an inputSchema is a JSON object whose type is
// "object", adding the type when the page left it out.
func objectSchema(raw json.RawMessage) (json.RawMessage, string) {
	return namedObjectSchema("inputSchema", raw)
}

// namedObjectSchema checks that the schema field (inputSchema or
// outputSchema) is a JSON object whose type is "object", adding the type
// when the page left it out.
func namedObjectSchema(field string, raw json.RawMessage) (json.RawMessage, string) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, "its " + field + " is not a JSON object"
	}
	switch ty := m["type"].(type) {
	case nil:
		m["type"] = "object"
		out, err := json.Marshal(m)
		if err != nil {
			return nil, "its " + field + " cannot be encoded again: " + err.Error()
		}
		return out, ""
	case string:
		if ty == "object" {
			return raw, ""
		}
	}
	verb := "take"
	if field == "outputSchema" {
		verb = "give"
	}
	return nil, fmt.Sprintf("its %s has type %v; MCP tools %s an object", field, m["type"], verb)
}

// newRegistrationBudget returns a tab's budget of new tool names: perMinute
// tokens, refilled evenly over a minute, with a burst of perMinute (it
// starts full).
func newRegistrationBudget(perMinute int) *rate.Limiter {
	return rate.NewLimiter(rate.Limit(float64(perMinute)/60), perMinute)
}

// takeUpTo removes up to n tokens from lim at time now and returns how many
// it got: as many as there are, where rate's AllowN takes all or none.
func takeUpTo(lim *rate.Limiter, n int, now time.Time) int {
	// The small bias keeps a refill that should be whole (a full minute)
	// from rounding down to one token less.
	got := min(n, int(lim.TokensAt(now)+1e-9))
	if got <= 0 || !lim.AllowN(now, got) {
		return 0
	}
	return got
}

// OriginPolicy decides which page origins may put tools into the catalog.
// The zero value (and nil) allows every origin.
type OriginPolicy struct {
	allow, deny []string
}

// NewOriginPolicy returns a policy from glob patterns on origins, such as
// "https://*.example.com" or "http://127.0.0.1:*". Only "*" is special: it
// matches any run of characters, including none. Letter case is ignored.
// An origin is allowed when it matches no deny pattern and, if any allow
// patterns are given, at least one of them. Origins look like
// scheme://host[:port]; pages loaded from files have the origin "file://"
// and sandboxed or data: pages "null".
func NewOriginPolicy(allow, deny []string) (*OriginPolicy, error) {
	p := &OriginPolicy{}
	for _, list := range []struct {
		flag string
		in   []string
		out  *[]string
	}{{"allow", allow, &p.allow}, {"deny", deny, &p.deny}} {
		for _, pat := range list.in {
			if err := checkOriginPattern(pat); err != nil {
				return nil, fmt.Errorf("--%s-origin %q: %w", list.flag, pat, err)
			}
			*list.out = append(*list.out, strings.ToLower(pat))
		}
	}
	return p, nil
}

func checkOriginPattern(pat string) error {
	if pat == "" {
		return fmt.Errorf("the pattern is empty")
	}
	if pat == "null" || pat == "*" {
		return nil
	}
	scheme, rest, ok := strings.Cut(pat, "://")
	if !ok || scheme == "" {
		return fmt.Errorf("an origin pattern looks like https://*.example.com (scheme://host[:port])")
	}
	if strings.ContainsAny(rest, "/?#") {
		return fmt.Errorf("an origin has no path, query or fragment; drop everything after the host and port")
	}
	return nil
}

// Allows reports whether tools of origin may enter the catalog.
func (p *OriginPolicy) Allows(origin string) bool {
	if p == nil {
		return true
	}
	o := strings.ToLower(origin)
	for _, pat := range p.deny {
		if globMatch(pat, o) {
			return false
		}
	}
	if len(p.allow) == 0 {
		return true
	}
	for _, pat := range p.allow {
		if globMatch(pat, o) {
			return true
		}
	}
	return false
}

// globMatch matches s against pat, where "*" matches any run of characters.
func globMatch(pat, s string) bool {
	parts := strings.Split(pat, "*")
	if len(parts) == 1 {
		return pat == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}
