package userscript

import (
	"slices"
	"sync"
)

// MaxRunURLs bounds the documents' URLs kept for each script (Runs).
const MaxRunURLs = 10

// Runs records the documents each userscript ran in, by the script's
// name: how many, and the URLs of the last MaxRunURLs (distinct, the
// latest first). A nil *Runs records nothing. Its methods are safe for
// concurrent use.
type Runs struct {
	mu sync.Mutex
	by map[string]*ran
}

type ran struct {
	n    int
	urls []string
}

// NewRuns returns an empty record.
func NewRuns() *Runs { return &Runs{by: map[string]*ran{}} }

// Ran notes that the script named name ran in a document at url.
func (r *Runs) Ran(name, url string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	x := r.by[name]
	if x == nil {
		x = &ran{}
		r.by[name] = x
	}
	x.n++
	if i := slices.Index(x.urls, url); i >= 0 {
		x.urls = slices.Delete(x.urls, i, i+1)
	}
	x.urls = slices.Insert(x.urls, 0, url)
	if len(x.urls) > MaxRunURLs {
		x.urls = x.urls[:MaxRunURLs]
	}
}

// Of returns how many documents the script named name ran in, and the
// URLs of the last ones, the latest first.
func (r *Runs) Of(name string) (int, []string) {
	if r == nil {
		return 0, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	x := r.by[name]
	if x == nil {
		return 0, nil
	}
	return x.n, slices.Clone(x.urls)
}

// Status is a userscript in force, as the status page shows it.
type Status struct {
	// Name is @name, File the file it was read from.
	Name, File string
	// Matches are its @match and @include lines, Excludes its @exclude
	// lines.
	Matches, Excludes []string
	// RunAt is @run-at; NoFrames is @noframes.
	RunAt    RunAt
	NoFrames bool
	// Ran counts the documents it ran in; Documents are the URLs of the
	// last ones (at most MaxRunURLs), the latest first.
	Ran       int
	Documents []string
}

// Report returns the status of each script, in order, with the documents
// runs recorded for it.
func Report(scripts []*Script, runs *Runs) []Status {
	out := make([]Status, 0, len(scripts))
	for _, s := range scripts {
		n, urls := runs.Of(s.Name)
		out = append(out, Status{
			Name: s.Name, File: s.File,
			Matches:  append(slices.Clone(s.Matches), s.Includes...),
			Excludes: slices.Clone(s.Excludes),
			RunAt:    s.RunAt, NoFrames: s.NoFrames,
			Ran: n, Documents: urls,
		})
	}
	return out
}
