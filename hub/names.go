package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strings"
)

// MaxNameLen is the longest routed tool name. Some MCP clients reject
// longer names (and many prefix them with the server's own name).
const MaxNameLen = 48

// ReservedPrefix starts the names of the MCP server's own tools. No page
// tool is ever given a routed name that starts with it (in any letter case):
// a page at http://webmcp with a tool "call" is served as page_webmcp_call.
const ReservedPrefix = "webmcp_"

// NameStyle says how page tools, resources and prompts are named
// (--tool-names).
type NameStyle string

const (
	// NamesSite names every page tool <site>_<tool> (and a page server's
	// resources and prompts by site and tab): the default.
	NamesSite NameStyle = "site"
	// NamesShort keeps the page's own name of a tool, resource or prompt
	// while no other origin offers the same one; on a clash, both fall
	// back to the site's names and keep them while their tabs live
	// (docs/decisions/2026-11-28-short-names.md).
	NamesShort NameStyle = "short"
)

// NameStyles are the values --tool-names takes, the default first (shell
// completion offers them).
func NameStyles() []NameStyle { return []NameStyle{NamesSite, NamesShort} }

// ParseNameStyle parses a --tool-names value; empty is NamesSite.
func ParseNameStyle(s string) (NameStyle, error) {
	if s == "" {
		return NamesSite, nil
	}
	if n := NameStyle(s); slices.Contains(NameStyles(), n) {
		return n, nil
	}
	return "", fmt.Errorf("--tool-names %q: want site (<site>_<tool>, the default) or short (the page's own names while no other site has the same)", s)
}

// SiteOf returns the site part of routed names for a page origin: the host
// with dots (and the colons of an IPv6 address) as underscores, followed by
// the port when it is not the scheme's default. file: pages are "file", and
// an opaque or unparsable origin is "opaque". Punycode hosts stay in their
// ASCII (xn--) form.
func SiteOf(origin string) string {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme == "" {
		return "opaque"
	}
	if u.Scheme == "file" {
		return "file"
	}
	host := u.Hostname()
	if host == "" {
		return "opaque"
	}
	site := host
	if ip := net.ParseIP(host); ip != nil && strings.Contains(host, ":") {
		site = strings.ReplaceAll(host, ":", "_")
	}
	site = strings.ReplaceAll(site, ".", "_")
	if port := u.Port(); port != "" && !(u.Scheme == "http" && port == "80") && !(u.Scheme == "https" && port == "443") {
		site += "_" + port
	}
	return sanitize(site)
}

// sanitize maps every character outside [A-Za-z0-9_-] to an underscore.
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:8]
}

// toolPart is the tool's own name made safe for routed names. A name that
// had to change gets a hash of the original, so that "a.b" and "a_b" never
// share a routed name.
func toolPart(name string) string {
	s := sanitize(name)
	if s != name {
		s += "_" + shortHash(name)
	}
	return s
}

// RoutedName joins the parts of a routed name with underscores and cuts it
// to MaxNameLen, ending a cut name in a hash of the whole.
func RoutedName(parts ...string) string {
	n := strings.Join(parts, "_")
	if len(n) <= MaxNameLen {
		return n
	}
	h := shortHash(n)
	return n[:MaxNameLen-len(h)-1] + "_" + h
}

// reserved reports whether a routed name is in the server's own namespace.
func reserved(name string) bool {
	return len(name) >= len(ReservedPrefix) && strings.EqualFold(name[:len(ReservedPrefix)], ReservedPrefix)
}

// shortName is a tool's own name as a routed name (--tool-names short):
// made safe and cut like any routed name, or "" when it would start with
// ReservedPrefix.
func shortName(tool string) string {
	n := RoutedName(toolPart(tool))
	if reserved(n) {
		return ""
	}
	return n
}

// naturalName is the readable name of a tool before collisions are settled:
// <site>_<tool>, or <site>_tab<N>_<tool> when tabPart is set.
func naturalName(site, tabPart, tool string) string {
	parts := []string{site}
	if tabPart != "" {
		parts = append(parts, tabPart)
	}
	parts = append(parts, toolPart(tool))
	n := RoutedName(parts...)
	if reserved(n) {
		n = RoutedName(append([]string{"page"}, parts...)...)
	}
	return n
}

// names hands out routed names and keeps them. Readable names can collide
// (site "localhost" with tool "8080_x" and site "localhost_8080" with tool
// "x"; a tool called "tab1_search" and the tab-level name of "search" in tab
// 1), so a name is allocated: the first holder of a readable name keeps it,
// and a later, different holder gets the name with a hash of its identity
// appended. A holder keeps its name while it is listed, while any tab it was
// seen in is open, and while it is cached; so a reload, or a moment without
// the tool, never renames a tool under a living tab.
type names struct {
	byID     map[string]*reservation
	byName   map[string]*reservation
	clock    uint64
	released int // releases since the last full gc
}

// reservation is one allocated name.
type reservation struct {
	id     string
	name   string
	tabs   []string // tabs the holder was seen in, sorted (a slice: most hold one)
	used   uint64   // when it was last allocated
	listed bool     // the catalog lists it now
	cached bool     // a cached tool holds it
}

// maxIdleNames bounds the reservations kept for holders that are not
// listed (their tabs are still open).
const maxIdleNames = 10000

func newNames() *names {
	return &names{byID: make(map[string]*reservation), byName: make(map[string]*reservation)}
}

// alloc returns the name of the holder id and marks it listed, allocating
// it when needed: the holder's earlier name, else prefer (when free and
// well-formed), else natural, else natural with a hash of id. tabs are the
// tabs the holder is seen in now; cached says a cached tool holds it.
func (ns *names) alloc(id, natural, prefer string, tabs []string, cached bool) string {
	return ns.take(nameReq{id: id, wants: []string{prefer, natural}, natural: natural, tabs: tabs, cached: cached})
}

// nameReq asks names for the name of one holder.
type nameReq struct {
	id string
	// wants are the names tried in order for a new holder, each when free
	// and well-formed (empty ones are skipped).
	wants []string
	// natural, with a hash of id, names a new holder none of wants fits.
	natural string
	// avoid is a name the holder gives up if it holds it (its short name,
	// when another site has the same tool): it is named anew, as a new
	// holder that keeps the tabs it was seen in.
	avoid  string
	tabs   []string
	cached bool
}

// take returns the name of the holder q.id and marks it listed, allocating
// it when needed: the holder's earlier name (unless it is q.avoid), else
// the first of q.wants that is free and well-formed, else q.natural with a
// hash of the holder's id.
func (ns *names) take(q nameReq) string {
	r := ns.byID[q.id]
	if r != nil && q.avoid != "" && r.name == q.avoid {
		delete(ns.byName, r.name)
		delete(ns.byID, q.id)
		q.tabs = slices.Concat(q.tabs, r.tabs)
		r = nil
	}
	if r == nil {
		name := ""
		for _, cand := range q.wants {
			if cand != "" && cand != q.avoid && !reserved(cand) && validName(cand) && ns.byName[cand] == nil {
				name = cand
				break
			}
		}
		for salt := ""; name == ""; salt += "+" {
			cand := RoutedName(q.natural, shortHash(q.id + salt)[:6])
			if !reserved(cand) && ns.byName[cand] == nil {
				name = cand
			}
		}
		r = &reservation{id: q.id, name: name}
		ns.byID[q.id] = r
		ns.byName[name] = r
	}
	ns.clock++
	r.used = ns.clock
	r.listed = true
	r.cached = q.cached
	for _, tab := range q.tabs {
		if i, seen := slices.BinarySearch(r.tabs, tab); !seen {
			r.tabs = slices.Insert(r.tabs, i, tab)
		}
	}
	return r.name
}

// release marks the holder id as no longer listed (it may be listed again
// by alloc).
func (ns *names) release(id string) {
	if r := ns.byID[id]; r != nil {
		r.listed, r.cached = false, false
		ns.released++
	}
}

// validName reports whether s is a well-formed routed name.
func validName(s string) bool {
	return s != "" && len(s) <= MaxNameLen && sanitize(s) == s
}

// gc forgets the holders among ids (all holders when ids is nil) that are
// not listed, not cached, and whose tabs have all closed (open reports
// whether a tab is open). When more idle holders remain than maxIdleNames,
// the longest idle go first.
func (ns *names) gc(ids []string, open func(tab string) bool) {
	check := func(r *reservation) bool {
		if r.listed || r.cached {
			return false
		}
		r.tabs = slices.DeleteFunc(r.tabs, func(tab string) bool { return !open(tab) })
		if len(r.tabs) == 0 {
			delete(ns.byID, r.id)
			delete(ns.byName, r.name)
			return false
		}
		return true
	}
	if ids != nil && ns.released <= maxIdleNames {
		for _, id := range ids {
			if r := ns.byID[id]; r != nil {
				check(r)
			}
		}
		return
	}
	ns.released = 0
	var idle []*reservation
	for _, r := range ns.byID {
		if check(r) {
			idle = append(idle, r)
		}
	}
	if len(idle) <= maxIdleNames {
		return
	}
	sort.Slice(idle, func(i, j int) bool { return idle[i].used < idle[j].used })
	for _, r := range idle[:len(idle)-maxIdleNames] {
		delete(ns.byID, r.id)
		delete(ns.byName, r.name)
	}
}
