package userscript

import (
	"path/filepath"
	"sync"
)

// Set is the userscripts in force: those read at start, replaced as a
// whole by Replace when they are read again (a reload). Browsers follow
// it: each takes Scripts (or Numbered) and waits on the channel it returns
// for the next change. A nil *Set holds no script and never changes. Its
// methods are safe for concurrent use.
//
// Each script put in force gets a number of its own, never reused, so that
// a document that ran a script before a reload still names it by its
// number, in every browser that follows the Set (also one connected after
// the reload).
type Set struct {
	mu      sync.Mutex
	scripts []*Script
	// past names every script put in force, by number; the scripts in
	// force are the last len(scripts).
	past    []Ref
	changed chan struct{}
}

// Ref names a script put in force once (Set.Numbered).
type Ref struct{ Name, File string }

// NewSet returns a Set holding scripts.
func NewSet(scripts []*Script) *Set {
	s := &Set{changed: make(chan struct{})}
	s.put(scripts)
	return s
}

// put puts scripts in force, numbering them.
func (s *Set) put(scripts []*Script) {
	s.scripts = scripts
	for _, x := range scripts {
		s.past = append(s.past, Ref{Name: x.Name, File: x.File})
	}
}

// Numbered is Scripts with the name and file of every script put in force
// since the Set was made, by number: the scripts in force are the last
// len(scripts) of them, in order. Neither slice is to be changed.
func (s *Set) Numbered() (scripts []*Script, past []Ref, changed <-chan struct{}) {
	if s == nil {
		return nil, nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scripts, s.past, s.changed
}

// Scripts returns the scripts in force (not to be changed) and a channel
// closed when they are replaced.
func (s *Set) Scripts() ([]*Script, <-chan struct{}) {
	if s == nil {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scripts, s.changed
}

// Replace puts scripts in force and wakes those that follow the Set.
func (s *Set) Replace(scripts []*Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(scripts)
	close(s.changed)
	s.changed = make(chan struct{})
}

// Reloaded says what reading the scripts again changed.
type Reloaded struct {
	// Loaded counts the scripts in force now; Added, Changed (the same
	// @name, another file or source) and Removed compare them with those
	// before.
	Loaded, Added, Changed, Removed int
	// Refused are the paths and files that could not be used. The script
	// each one held before, if any, stays in force.
	Refused []Refusal
}

// Reload reads the scripts at paths again, as Load does, for the set to
// put in force after prev. A file that cannot be used now is refused and
// keeps its previous version (as does every script of a path that cannot
// be listed now), so that nothing that was working is lost; a file gone
// from a directory given is removed. The scripts read are in Load's order,
// the kept ones after them.
func Reload(paths []string, prev []*Script) ([]*Script, Reloaded) {
	next, refused := load(paths)
	taken := make(map[string]bool, len(next))
	for _, s := range next {
		taken[s.Name] = true
	}
	for _, s := range prev {
		if !taken[s.Name] && keptBy(s, refused) {
			taken[s.Name] = true
			next = append(next, s)
		}
	}
	r := Reloaded{Loaded: len(next), Refused: refused}
	before := make(map[string]*Script, len(prev))
	for _, s := range prev {
		before[s.Name] = s
	}
	for _, s := range next {
		switch old := before[s.Name]; {
		case old == nil:
			r.Added++
		case old.File != s.File || old.Source != s.Source:
			r.Changed++
		}
		delete(before, s.Name)
	}
	r.Removed = len(before)
	return next, r
}

// keptBy says whether a refusal keeps s: it names s's file, or the
// directory s was read from.
func keptBy(s *Script, refused []Refusal) bool {
	for _, r := range refused {
		if r.Path == s.File || filepath.Clean(r.Path) == filepath.Dir(s.File) {
			return true
		}
	}
	return false
}
