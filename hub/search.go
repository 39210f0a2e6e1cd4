package hub

import (
	"math"
	"net/url"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/webmcp-cdp/webmcp-cdp/internal/textdist"
)

// Tool search: webmcp_list_tools's way into a catalog too big to list. The
// catalog's tools are indexed by the words of their names (the routed name
// and the page's own), titles, descriptions and sites (the site, and the
// words of the URL's path); a query's words are looked up in an inverted
// index and each tool is scored by the words it matches, weighted by field
// and by how rare the word is. The index is rebuilt, outside the catalog's
// lock, on the first search after the catalog changed.

// SearchHit is one tool a search found.
type SearchHit struct {
	// Tool is the routed tool.
	Tool RoutedTool
	// Matched is how many of the query's words the tool matches.
	Matched int
	// Score ranks hits that match as many words: higher is better.
	Score float64
}

// Field weights: a word in a tool's name says more than one in its
// description.
const (
	weightName  = 3.0
	weightTitle = 2.0
	weightSite  = 1.5
	weightDesc  = 1.0
	// weightPrefix scales a match of a query word that only starts a tool's
	// word ("calc" in "calculate").
	weightPrefix = 0.5
	// minPrefix is the shortest query word matched as a prefix.
	minPrefix = 3
)

// searchIndex is an immutable inverted index over one version of the
// catalog.
type searchIndex struct {
	version uint64
	tools   []RoutedTool
	post    map[string][]posting // word -> the tools that have it
	vocab   []string             // the words, sorted, for prefix matches
	byName  map[string]*toolWords
}

// posting is one tool's weight for one word: the sum of the weights of the
// fields the word is in.
type posting struct {
	tool   int32
	weight float32
}

// stopWords are left out of queries and tools alike.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "of": true, "in": true, "on": true, "for": true,
	"and": true, "or": true, "my": true, "me": true, "with": true, "from": true, "by": true, "is": true,
	"it": true, "this": true, "that": true, "at": true, "as": true, "be": true, "i": true, "into": true,
}

// words splits text into lower-case search words: at anything but letters
// and digits, and between a lower-case letter and an upper-case one
// (addToCart is add, to, cart). Each word is reduced by stem; stop words
// are dropped. fn is called once per word.
func words(text string, fn func(string)) {
	start := -1
	prevLower := false
	emit := func(end int) {
		if start >= 0 {
			w := stem(strings.ToLower(text[start:end]))
			if w != "" && !stopWords[w] {
				fn(w)
			}
		}
		start = -1
	}
	for i, r := range text {
		letter := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case !letter:
			emit(i)
			prevLower = false
			continue
		case start >= 0 && prevLower && unicode.IsUpper(r):
			emit(i)
		}
		if start < 0 {
			start = i
		}
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	emit(len(text))
}

// stem reduces an English plural to its singular, well enough for tool
// search (carts, boxes, categories, items).
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "sses")):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// toolWords is one tool's search words and their weights, kept from one
// index to the next while the fields they come from stay the same.
type toolWords struct {
	name, tool, title, desc, site, url string
	words                              []string
	weights                            []float32
}

// same reports whether tw was made from rt's fields. The catalog keeps the
// RoutedTool of a tool that did not change, so its strings are the same
// memory and compare at once.
func (tw *toolWords) same(rt RoutedTool) bool {
	return tw.name == rt.Name && tw.tool == rt.Source.Tool && tw.title == rt.Tool.Title &&
		tw.desc == rt.Tool.Description && tw.site == rt.Source.Site && tw.url == rt.Source.URL
}

// wordsOf splits a tool's fields into its search words, each with its
// weight: a word counts once per tool, at the weight of its best field,
// and each other field it is in adds a quarter of that field's weight.
func wordsOf(rt RoutedTool, acc map[string]float32) *toolWords {
	clear(acc)
	add := func(weight float32) func(string) {
		return func(w string) {
			if acc[w] < weight {
				acc[w] = weight + acc[w]/4
			} else {
				acc[w] += weight / 4
			}
		}
	}
	words(rt.Name, add(weightName))
	words(rt.Source.Tool, add(weightName))
	words(rt.Tool.Title, add(weightTitle))
	words(rt.Tool.Description, add(weightDesc))
	words(rt.Source.Site, add(weightSite))
	if u, err := url.Parse(rt.Source.URL); err == nil {
		words(u.Hostname(), add(weightSite))
		words(u.Path, add(weightSite))
	}
	tw := &toolWords{name: rt.Name, tool: rt.Source.Tool, title: rt.Tool.Title, desc: rt.Tool.Description,
		site: rt.Source.Site, url: rt.Source.URL, words: make([]string, 0, len(acc)), weights: make([]float32, 0, len(acc))}
	for w, weight := range acc {
		tw.words = append(tw.words, w)
		tw.weights = append(tw.weights, weight)
	}
	return tw
}

// newSearchIndex indexes tools, taking the words of tools that did not
// change from prev (which may be nil).
func newSearchIndex(version uint64, tools []RoutedTool, prev *searchIndex) *searchIndex {
	ix := &searchIndex{version: version, tools: tools, post: make(map[string][]posting, 1024), byName: make(map[string]*toolWords, len(tools))}
	acc := make(map[string]float32, 64)
	for i, rt := range tools {
		var tw *toolWords
		if prev != nil {
			if old := prev.byName[rt.Name]; old != nil && old.same(rt) {
				tw = old
			}
		}
		if tw == nil {
			tw = wordsOf(rt, acc)
		}
		ix.byName[rt.Name] = tw
		for j, w := range tw.words {
			ix.post[w] = append(ix.post[w], posting{tool: int32(i), weight: tw.weights[j]})
		}
	}
	ix.vocab = make([]string, 0, len(ix.post))
	for w := range ix.post {
		ix.vocab = append(ix.vocab, w)
	}
	sort.Strings(ix.vocab)
	return ix
}

// search returns the tools that match query best first, at most limit of
// them (limit <= 0 for all), and how many matched in all. An empty query
// matches every tool, in name order.
func (ix *searchIndex) search(query string, limit int) ([]SearchHit, int) {
	var terms []string
	words(query, func(w string) {
		if !slices.Contains(terms, w) {
			terms = append(terms, w)
		}
	})
	if len(terms) == 0 {
		n := len(ix.tools)
		if limit > 0 && limit < n {
			n = limit
		}
		hits := make([]SearchHit, n)
		for i := range hits {
			hits[i] = SearchHit{Tool: ix.tools[i]}
		}
		return hits, len(ix.tools)
	}
	// Dense per-tool arrays: a search touches few words but may touch
	// many tools, and maps would cost more than the scoring.
	n := len(ix.tools)
	score := make([]float64, n)
	matched := make([]int32, n)
	best := make([]float32, n) // this term's best weight per tool
	var touched, hitTools []int32
	for _, term := range terms {
		touched = touched[:0]
		take := func(w string, scale float32) {
			for _, p := range ix.post[w] {
				v := p.weight * scale
				if best[p.tool] == 0 {
					touched = append(touched, p.tool)
				}
				if v > best[p.tool] {
					best[p.tool] = v
				}
			}
		}
		take(term, 1)
		if len(term) >= minPrefix {
			for i := sort.SearchStrings(ix.vocab, term); i < len(ix.vocab) && strings.HasPrefix(ix.vocab[i], term); i++ {
				if ix.vocab[i] != term {
					take(ix.vocab[i], weightPrefix)
				}
			}
		}
		if len(touched) == 0 {
			continue
		}
		idf := math.Log(1 + float64(n)/float64(len(touched)))
		for _, t := range touched {
			if matched[t] == 0 {
				hitTools = append(hitTools, t)
			}
			matched[t]++
			score[t] += float64(best[t]) * idf
			best[t] = 0
		}
	}
	hits := make([]SearchHit, 0, len(hitTools))
	for _, t := range hitTools {
		hits = append(hits, SearchHit{Tool: ix.tools[t], Matched: int(matched[t]), Score: score[t]})
	}
	sort.Slice(hits, func(i, j int) bool {
		a, b := &hits[i], &hits[j]
		if a.Matched != b.Matched {
			return a.Matched > b.Matched
		}
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.Tool.Name < b.Tool.Name
	})
	total := len(hits)
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, total
}

// Search finds the routed tools that match the words of query, best first:
// first those that match the most words, then by score (a word in the name
// counts more than in the title, site or description, and a rare word more
// than a common one; a word that only starts a tool's word counts half).
// It returns at most limit hits (limit <= 0 for all) and how many tools
// matched in all. An empty query lists every tool in name order.
func (h *Hub) Search(query string, limit int) ([]SearchHit, int) {
	return h.searchIndex().search(query, limit)
}

// searchIndex returns the index of the current catalog, building it when
// the catalog changed since the last one. The build runs outside the
// catalog's lock; two searches racing after a change may both build, and
// the newer index is kept.
func (h *Hub) searchIndex() *searchIndex {
	h.mu.Lock()
	version := h.version
	h.mu.Unlock()
	if ix := h.search.Load(); ix != nil && ix.version == version {
		return ix
	}
	h.mu.Lock()
	version, tools := h.version, slices.Clone(h.list)
	h.mu.Unlock()
	ix := newSearchIndex(version, tools, h.search.Load())
	for {
		old := h.search.Load()
		if old != nil && old.version >= version {
			return ix
		}
		if h.search.CompareAndSwap(old, ix) {
			return ix
		}
	}
}

// Closest returns up to n routed names that look most like name: those
// that share the most words with it, then those nearest by edit distance.
// It is for an error about a name that does not exist.
func (h *Hub) Closest(name string, n int) []string {
	terms := 0
	words(name, func(string) { terms++ })
	hits, _ := h.Search(name, n)
	var out []string
	for _, hit := range hits {
		// Sharing one common word of several ("tool") is no likeness.
		if hit.Matched*2 > terms || hit.Matched == terms {
			out = append(out, hit.Tool.Name)
		}
	}
	if len(out) >= n {
		return out
	}
	h.mu.Lock()
	list := slices.Clone(h.list)
	h.mu.Unlock()
	type near struct {
		name string
		d    int
	}
	var cands []near
	for _, rt := range list {
		if slices.Contains(out, rt.Name) {
			continue
		}
		if d := textdist.Edit(name, rt.Name); d <= max(2, len(name)/3) {
			cands = append(cands, near{rt.Name, d})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].d != cands[j].d {
			return cands[i].d < cands[j].d
		}
		return cands[i].name < cands[j].name
	})
	for _, c := range cands {
		if len(out) >= n {
			break
		}
		out = append(out, c.name)
	}
	return out
}
