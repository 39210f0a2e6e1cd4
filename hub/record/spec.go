package record

import (
	"bytes"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// This file writes events as a spec of webmcp-cdp test: a page per run of
// calls into one tab and URL, a step per call.

// specOut is a spec as written, in the field order of docs/ci-spec.md.
type specOut struct {
	Secrets []string  `yaml:"secrets,omitempty"`
	Base    string    `yaml:"base,omitempty"`
	Lint    string    `yaml:"lint"`
	Pages   []pageOut `yaml:"pages"`
}

type pageOut struct {
	Name  string    `yaml:"name,omitempty"`
	URL   string    `yaml:"url"`
	Calls []callOut `yaml:"calls"`
}

type callOut struct {
	Name   string    `yaml:"name"`
	Tool   string    `yaml:"tool"`
	Args   any       `yaml:"args,omitempty"`
	Expect expectOut `yaml:"expect"`
}

type expectOut struct {
	IsError  *bool `yaml:"isError,omitempty"`
	Snapshot any   `yaml:"snapshot,omitempty"`
}

// render writes events as a spec. r.mu is held.
func (r *Recorder) render(events []*event) ([]byte, error) {
	out := specOut{Lint: "off", Pages: []pageOut{}}
	gen := make(map[int]int) // tab -> its opens, reloads and closes
	type pageKey struct {
		tab, gen int
		url      string
	}
	var cur *pageKey
	var base *url.URL
	n := 0
	used := make(map[string]bool)
	redacted := make(map[int][]string) // page -> the placeholders in its URL
	for _, e := range events {
		if e.kind != evCall {
			gen[e.tab]++
			continue
		}
		r.ready(e)
		st := e.step
		k := pageKey{e.tab, gen[e.tab], e.url}
		if cur == nil || *cur != k {
			if base == nil {
				base = originOf(e.url)
			}
			p := pageOut{URL: relative(base, st.url)}
			if cur != nil && cur.tab == k.tab && cur.url == k.url {
				p.Name = fmt.Sprintf("%s (tab %d again: reloaded, or used after another tab)", p.URL, k.tab)
			}
			if len(st.redacted) > 0 {
				redacted[len(out.Pages)] = slices.Compact(slices.Sorted(slices.Values(st.redacted)))
			}
			out.Pages = append(out.Pages, p)
			cur = &k
		}
		n++
		c := callOut{Name: fmt.Sprintf("step %d: %s", n, st.tool), Tool: st.tool, Args: st.args}
		if st.isError {
			t := true
			c.Expect.IsError = &t
		}
		if st.argsSkipped != "" {
			c.Name += " (" + st.argsSkipped + ")"
		}
		if st.skipped != "" {
			c.Name += " (" + st.skipped + ": not snapshotted)"
		} else {
			c.Expect.Snapshot = st.snapshot
		}
		collectPlaceholders(st.args, used)
		collectPlaceholders(st.snapshot, used)
		p := &out.Pages[len(out.Pages)-1]
		p.Calls = append(p.Calls, c)
	}
	for _, name := range r.secrets.names {
		if used[name] {
			out.Secrets = append(out.Secrets, name)
		}
	}
	if base != nil {
		out.Base = base.String()
	}
	var b bytes.Buffer
	name := "FILE"
	if r.opts.File != "" {
		name = filepath.Base(r.opts.File)
	}
	fmt.Fprintf(&b, "# A session recorded by webmcp-cdp (%d calls, %s). Run it with: webmcp-cdp test %s\n", n, r.opts.Now().UTC().Format(time.RFC3339), name)
	b.WriteString("# Snapshots are compared structurally; mark values that change from run to run with\n")
	fmt.Fprintf(&b, "# ignore: [$.path] or matches: {$.path: regexp}, and refresh them with: webmcp-cdp test %s --update\n", name)
	if len(out.Secrets) > 0 {
		fmt.Fprintf(&b, "# secrets: each ${NAME} stands for a value not written here; set %s in the environment.\n", strings.Join(out.Secrets, ", "))
	}
	if len(redacted) > 0 {
		b.WriteString("# Page URLs had secrets: they are ${NAME}s there too (marked redacted), which test does not fill in.\n")
		b.WriteString("# Write the values (or a test account's) into those URLs before running.\n")
	}
	var doc yaml.Node
	if err := doc.Encode(out); err != nil {
		return nil, fmt.Errorf("writing the spec: %w", err)
	}
	markRedacted(&doc, redacted)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("writing the spec: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("writing the spec: %w", err)
	}
	return b.Bytes(), nil
}

// collectPlaceholders notes the ${NAME}s in the strings of v.
func collectPlaceholders(v any, used map[string]bool) {
	switch x := v.(type) {
	case string:
		for {
			i := strings.Index(x, "${")
			if i < 0 {
				return
			}
			j := strings.IndexByte(x[i:], '}')
			if j < 0 {
				return
			}
			used[x[i+2:i+j]] = true
			x = x[i+j+1:]
		}
	case map[string]any:
		for _, e := range x {
			collectPlaceholders(e, used)
		}
	case []any:
		for _, e := range x {
			collectPlaceholders(e, used)
		}
	}
}

// markRedacted writes a comment after the url of each page whose URL
// holds placeholders (redacted: page index -> their names). doc is the
// spec's mapping node.
func markRedacted(doc *yaml.Node, redacted map[int][]string) {
	if len(redacted) == 0 {
		return
	}
	pages := mapValue(doc, "pages")
	if pages == nil {
		return
	}
	for i, names := range redacted {
		if i >= len(pages.Content) {
			continue
		}
		if u := mapValue(pages.Content[i], "url"); u != nil {
			u.LineComment = "redacted: fill in " + strings.Join(names, ", ") + " by hand; test fills in no URL"
		}
	}
}

// mapValue is the value of key in a mapping node, or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// originOf is the origin of a URL as a base (scheme://host/), or nil for a
// URL without one (about:blank, data:).
func originOf(raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}
}

// relative writes raw relative to base when it has base's origin, so that
// --base-url can move the spec to another server; else as it is.
func relative(base *url.URL, raw string) string {
	u, err := url.Parse(raw)
	// A URL with userinfo stays whole: relative, it would lose it.
	if base == nil || err != nil || u.Scheme != base.Scheme || u.Host != base.Host || u.User != nil {
		return raw
	}
	// The query and fragment as raw has them: url.URL.String would escape
	// the braces of a placeholder in a fragment.
	tail := ""
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		tail = raw[i:]
	}
	rel := (&url.URL{Path: strings.TrimPrefix(u.Path, "/")}).String() + tail
	if rel == "" || strings.HasPrefix(rel, "?") || strings.HasPrefix(rel, "#") {
		rel = "./" + rel
	}
	return rel
}
