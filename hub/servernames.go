package hub

import (
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// This file names the resources, resource templates and prompts of page
// servers with --tool-names short: an entry keeps the page server's own URI
// or name while one origin alone offers it, as tools do (catalog.go).
//
// What clashes: the same URI, template or prompt name from two origins,
// and, since a template is matched rather than looked up, a template whose
// literal beginning (the text before its first "{") begins another
// origin's template or resource URI. On a clash every entry involved falls
// back to its routed form (webmcp://<site>/<tab>/..., <site>_<tab>_<name>)
// and keeps it while a tab it was seen in stays open.
//
// What can never be an own name: a URI or template whose scheme is
// webmcp (routed URIs are all webmcp://, so an own URI cannot stand for
// another tab's), a template without a literal scheme, and a prompt name
// that starts with ReservedPrefix or reads like a routed prompt name
// (routedPromptLike). So an own name never equals a routed one, and an
// entry of one origin is never reached through another's name.

// shortIndex is what page servers offer under their own names.
type shortIndex struct {
	// res and prompts map an own URI or name to the source keys of the
	// servers that list it (all of one origin), the latest listing first:
	// the own name goes to the first.
	res     map[string][]string
	prompts map[string][]string
	tpls    []shortTemplate // by prefix
	tplKeys map[string][]string
}

// shortTemplate is a resource template served as the page gave it.
type shortTemplate struct {
	tpl, prefix string
	keys        []string
}

// maxOverlapScan bounds the templates and URIs compared with one template.
const maxOverlapScan = 256

// maxLostNames bounds the own names remembered as fallen back.
const maxLostNames = 10000

// routedPromptLike matches what routed prompt names may look like: they
// hold _tab<N>, or, cut to MaxNameLen, end in _ and 8 hex digits.
var routedPromptLike = regexp.MustCompile(`_tab[0-9]|^.{39}_[0-9a-f]{8}$`)

// shortURI reports whether a resource URI may be served as it is.
func shortURI(uri string) bool {
	u, err := url.Parse(uri)
	return err == nil && u.Scheme != "" && !strings.EqualFold(u.Scheme, URIScheme)
}

// templatePrefix is the literal beginning of a template that may be served
// as it is, or "" when it may not: the text before its first "{", which
// must hold a scheme other than webmcp.
func templatePrefix(tpl string) string {
	prefix, _, _ := strings.Cut(tpl, "{")
	scheme, _, ok := strings.Cut(prefix, ":")
	if !ok || !validScheme(scheme) || strings.EqualFold(scheme, URIScheme) {
		return ""
	}
	return prefix
}

// validScheme reports whether s is a URI scheme (RFC 3986).
func validScheme(s string) bool {
	for i, c := range []byte(s) {
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

// shortPrompt reports whether a prompt name may be served as it is.
func shortPrompt(name string) bool {
	return !reserved(name) && !routedPromptLike.MatchString(name)
}

// offers is one own URI, template or prompt name: the servers that list
// it, by origin.
type offers map[string][]*serverCatalog

func (o offers) add(c *serverCatalog) {
	l := o[c.src.Origin]
	if len(l) > 0 && l[len(l)-1] == c {
		return // listed twice by one server
	}
	o[c.src.Origin] = append(l, c)
}

// keys are the source keys of the servers of the only origin, the latest
// listing first.
func (o offers) keys() []string {
	for _, cs := range o {
		cs = slices.Clone(cs)
		sort.Slice(cs, func(i, j int) bool { return cs[i].seq > cs[j].seq })
		keys := make([]string, len(cs))
		for i, c := range cs {
			keys[i] = c.src.Key
		}
		return keys
	}
	return nil
}

// twoOrigins reports whether a and b together have more than one origin.
func twoOrigins(a, b offers) bool {
	if len(a) > 1 || len(b) > 1 {
		return true
	}
	for o := range a {
		_, same := b[o]
		return !same
	}
	return false
}

// nameLocked recomputes p.short from the server catalogs: with
// --tool-names site (open nil) there is none. open holds the open tabs.
func (p *pageServers) nameLocked(open map[string]bool) {
	if open == nil {
		p.short = nil
		return
	}
	res, tpls, prompts := map[string]offers{}, map[string]offers{}, map[string]offers{}
	add := func(m map[string]offers, own string, c *serverCatalog) {
		if m[own] == nil {
			m[own] = offers{}
		}
		m[own].add(c)
	}
	for _, c := range p.res {
		for _, r := range c.resources {
			if shortURI(r.URI) {
				add(res, r.URI, c)
			}
		}
		for _, t := range c.templates {
			if templatePrefix(t.URITemplate) != "" {
				add(tpls, t.URITemplate, c)
			}
		}
		for _, pr := range c.prompts {
			if shortPrompt(pr.Name) {
				add(prompts, pr.Name, c)
			}
		}
	}
	clash := map[string]bool{} // kind letter + own name
	for kind, m := range map[string]map[string]offers{"r": res, "t": tpls, "p": prompts} {
		for own, o := range m {
			if len(o) > 1 {
				clash[kind+own] = true
			}
		}
	}
	// Templates against templates and resources of other origins: what
	// begins with a template's literal beginning follows it in order.
	tlist := make([]string, 0, len(tpls))
	for t := range tpls {
		tlist = append(tlist, t)
	}
	prefixOf := func(t string) string { return templatePrefix(t) }
	sort.Slice(tlist, func(i, j int) bool { return prefixOf(tlist[i]) < prefixOf(tlist[j]) })
	uris := make([]string, 0, len(res))
	for u := range res {
		uris = append(uris, u)
	}
	sort.Strings(uris)
	// A template that begins more than maxOverlapScan others falls back
	// without looking further (it then matches none of them), so that many
	// servers' templates cost at most that much each.
	for i, t := range tlist {
		prefix := prefixOf(t)
		for n, u := range tlist[i+1:] {
			if !strings.HasPrefix(prefixOf(u), prefix) {
				break
			}
			if n >= maxOverlapScan {
				clash["t"+t] = true
				break
			}
			if twoOrigins(tpls[t], tpls[u]) {
				clash["t"+t], clash["t"+u] = true, true
			}
		}
		for k, n := sort.SearchStrings(uris, prefix), 0; k < len(uris) && strings.HasPrefix(uris[k], prefix); k, n = k+1, n+1 {
			if n >= maxOverlapScan {
				clash["t"+t] = true
				break
			}
			if twoOrigins(tpls[t], res[uris[k]]) {
				clash["t"+t], clash["r"+uris[k]] = true, true
			}
		}
	}
	// Forget the fallen-back names whose tabs have all closed, then note
	// the clashes, and the tabs the names still fallen back are seen in.
	if p.lost == nil {
		p.lost = map[string][]string{}
	}
	for k, tabs := range p.lost {
		tabs = slices.DeleteFunc(tabs, func(tab string) bool { return !open[tab] })
		if len(tabs) == 0 {
			delete(p.lost, k)
		} else {
			p.lost[k] = tabs
		}
	}
	short := &shortIndex{res: map[string][]string{}, prompts: map[string][]string{}, tplKeys: map[string][]string{}}
	offered := map[string]bool{}
	for kind, m := range map[string]map[string]offers{"r": res, "t": tpls, "p": prompts} {
		for own, o := range m {
			fell := clash[kind+own]
			for origin, cs := range o {
				k := kind + "\x00" + origin + "\x00" + own
				offered[k] = true
				if !fell && p.lost[k] == nil {
					continue
				}
				fell = true
				for _, c := range cs {
					if i, seen := slices.BinarySearch(p.lost[k], c.src.Tab); !seen {
						p.lost[k] = slices.Insert(p.lost[k], i, c.src.Tab)
					}
				}
			}
			if fell {
				continue
			}
			switch kind {
			case "r":
				short.res[own] = o.keys()
			case "p":
				short.prompts[own] = o.keys()
			case "t":
				short.tplKeys[own] = o.keys()
				short.tpls = append(short.tpls, shortTemplate{tpl: own, prefix: templatePrefix(own), keys: short.tplKeys[own]})
			}
		}
	}
	if len(p.lost) > maxLostNames {
		for k := range p.lost {
			if !offered[k] {
				delete(p.lost, k)
			}
		}
	}
	sort.Slice(short.tpls, func(i, j int) bool { return short.tpls[i].prefix < short.tpls[j].prefix })
	p.short = short
}

// resKey is the source key of the server an own resource URI goes to:
// the one that lists it, else the one whose template has the longest
// literal beginning of it; "" when none.
func (s *shortIndex) resKey(uri string) string {
	if keys := s.res[uri]; keys != nil {
		return keys[0]
	}
	best := -1
	for i, t := range s.tpls {
		if strings.HasPrefix(uri, t.prefix) && (best < 0 || len(t.prefix) > len(s.tpls[best].prefix)) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return s.tpls[best].keys[0]
}

// ownURI reports whether uri, of the server key (a URI of its own, or one
// read through its template), is served under its own URI: the own URI
// goes to that server.
func (s *shortIndex) ownURI(key, uri string) bool {
	if keys := s.res[uri]; keys != nil {
		return keys[0] == key
	}
	for _, t := range s.tpls {
		if strings.HasPrefix(uri, t.prefix) && t.keys[0] == key {
			return true
		}
	}
	return false
}

// openTabSet is the open tabs, with --tool-names short (nil otherwise).
func (h *Hub) openTabSet() map[string]bool {
	if h.opts.Names != NamesShort {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	open := make(map[string]bool, len(h.tabs))
	for id := range h.tabs {
		open[id] = true
	}
	return open
}
