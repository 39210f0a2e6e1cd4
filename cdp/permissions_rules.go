package cdp

import (
	"net/url"
	"strings"
)

// This file holds the rules of the Permissions Policy feature "tools" as
// pure functions over what CDP reported (see permissions.go): the header
// and allow attribute grammars, and the inheritance of the feature into a
// frame.

// allowlist is a parsed allowlist for one feature.
type allowlist struct {
	all     bool     // *
	self    bool     // self / 'self'
	src     bool     // 'src' (an allow attribute only)
	origins []string // serialized origins
}

// matches says whether the allowlist covers origin, with self the origin
// 'self' stands for, and src (for 'src') the origin of the frame's src.
func (a allowlist) matches(origin, self, src, urlOrigin string) bool {
	if a.all {
		return true
	}
	if opaque(origin) {
		// An opaque origin (a sandboxed frame) is matched by 'src' and *
		// only: Chromium compares 'src' with the origin the frame's URL
		// would have had.
		return a.src && urlOrigin != "" && urlOrigin == src
	}
	if a.self && origin == self {
		return true
	}
	if a.src && origin == src {
		return true
	}
	for _, o := range a.origins {
		if o == origin {
			return true
		}
	}
	return false
}

func opaque(origin string) bool {
	return origin == "" || origin == "null" || origin == "://"
}

// parseHeaderTools reads the "tools" member of a Permissions-Policy header
// (a structured-field dictionary: tools=(), tools=*, tools=(self
// "https://a.example")). It returns nil when the header has no such member.
// Several header lines (joined by the browser with "\n" or ",") are one
// dictionary; a later member wins, as in a structured-field dictionary.
func parseHeaderTools(h string) *allowlist {
	var out *allowlist
	for _, m := range splitTop(strings.ReplaceAll(h, "\n", ",")) {
		k, v, ok := strings.Cut(strings.TrimSpace(m), "=")
		if !ok || strings.TrimSpace(k) != "tools" {
			continue
		}
		v = strings.TrimSpace(v)
		if i := strings.Index(v, ";"); i >= 0 && !strings.HasPrefix(v, "(") {
			v = v[:i] // parameters
		}
		a := allowlist{}
		items := v
		if strings.HasPrefix(v, "(") {
			end := strings.LastIndex(v, ")")
			if end < 0 {
				continue // malformed: the member is ignored
			}
			items = v[1:end]
		}
		for _, it := range strings.Fields(items) {
			if i := strings.Index(it, ";"); i >= 0 {
				it = it[:i]
			}
			switch {
			case it == "*":
				a.all = true
			case it == "self":
				a.self = true
			case strings.HasPrefix(it, `"`) && strings.HasSuffix(it, `"`) && len(it) >= 2:
				if o := tupleOrigin(it[1 : len(it)-1]); o != "" {
					a.origins = append(a.origins, o)
				}
			}
		}
		out = &a
	}
	return out
}

// splitTop splits on commas outside parentheses and quotes.
func splitTop(s string) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth <= 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// parseAllowTools reads the "tools" entry of an iframe's allow attribute
// ("tools", "tools *", "tools 'none'", "camera; tools 'self'
// https://a.example"). It returns nil when the attribute has no such entry;
// the first entry for the feature counts. With no allowlist the entry means
// 'src'.
func parseAllowTools(attr string) *allowlist {
	for _, entry := range strings.Split(attr, ";") {
		f := strings.Fields(entry)
		if len(f) == 0 || f[0] != "tools" {
			continue
		}
		a := allowlist{}
		if len(f) == 1 {
			a.src = true
		}
		for _, it := range f[1:] {
			switch strings.ToLower(it) {
			case "*":
				a.all = true
			case "'self'":
				a.self = true
			case "'src'":
				a.src = true
			case "'none'":
			default:
				if o := tupleOrigin(it); o != "" {
					a.origins = append(a.origins, o)
				}
			}
		}
		return &a
	}
	return nil
}

// headerVerdict applies a document's own Permissions-Policy header.
func headerVerdict(header, origin string) toolsVerdict {
	if a := parseHeaderTools(header); a != nil && !a.matches(origin, origin, "", "") {
		return toolsVerdict{reason: "its Permissions-Policy header disables \"tools\" (" + strings.TrimSpace(header) + ")"}
	}
	return toolsVerdict{allowed: true}
}

// childFacts are the facts about a frame whose parent may use tools.
type childFacts struct {
	origin       string  // the frame document's origin ("null" when opaque)
	urlOrigin    string  // the origin of the frame's URL, sandbox ignored
	parentOrigin string  // the parent document's origin
	parentHeader string  // the parent document's Permissions-Policy header
	allow        *string // the <iframe>'s allow attribute, nil without one
	srcOrigin    string  // the origin of the <iframe>'s src ('src')
}

// childVerdict applies the parent's header and the container policy (the
// frame's own header comes after, in headerVerdict).
func childVerdict(c childFacts) toolsVerdict {
	if a := parseHeaderTools(c.parentHeader); a != nil && !a.matches(c.origin, c.parentOrigin, "", c.urlOrigin) {
		return toolsVerdict{reason: "its parent's Permissions-Policy header does not delegate \"tools\" to " + c.origin}
	}
	var declared *allowlist
	if c.allow != nil {
		declared = parseAllowTools(*c.allow)
	}
	if declared != nil {
		if !declared.matches(c.origin, c.parentOrigin, c.srcOrigin, c.urlOrigin) {
			return toolsVerdict{reason: "its <iframe allow=\"" + *c.allow + "\"> does not grant \"tools\" to " + c.origin}
		}
		return toolsVerdict{allowed: true}
	}
	if opaque(c.origin) || c.origin != c.parentOrigin {
		return toolsVerdict{reason: "it is a cross-origin or sandboxed frame whose <iframe> does not delegate \"tools\" (allow=\"tools\")"}
	}
	return toolsVerdict{allowed: true}
}

// tupleOrigin serializes the origin of an absolute http(s) URL, or "".
func tupleOrigin(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	host := strings.ToLower(u.Host)
	if p := u.Port(); (u.Scheme == "http" && p == "80") || (u.Scheme == "https" && p == "443") {
		host = strings.ToLower(u.Hostname())
	}
	return strings.ToLower(u.Scheme) + "://" + host
}
