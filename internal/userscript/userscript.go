// Package userscript reads the operator's userscripts (files with a
// `// ==UserScript==` header, as Tampermonkey and Violentmonkey take them)
// and tells which URLs each one runs on.
//
// It is a leaf: it parses and matches, and knows nothing of browsers. A
// script's @match and @exclude are Chrome match patterns, its @include
// globs; both compile to one regular expression whose source is valid in Go
// and in JavaScript alike (Script.Pattern), so the page can test its own URL
// with the very expression Go tests.
package userscript

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// MaxSize is the largest userscript read, in bytes.
const MaxSize = 1 << 20

// RunAt is when in a document's life a script runs.
type RunAt string

// The values of @run-at.
const (
	// DocumentStart runs the script as the document starts, after the
	// page API and before any of the page's own scripts.
	DocumentStart RunAt = "document-start"
	// DocumentEnd runs it once the document is parsed (DOMContentLoaded).
	DocumentEnd RunAt = "document-end"
	// DocumentIdle runs it just after DOMContentLoaded, in a task of its
	// own (the default).
	DocumentIdle RunAt = "document-idle"
)

// Script is one userscript, its header read.
type Script struct {
	// Name is @name, or the file's name without .user.js when the header
	// has none.
	Name string
	// File is the path the script was read from.
	File string
	// Description and Version are @description and @version, if given.
	Description, Version string
	// Matches, Includes and Excludes are the header's @match, @include
	// and @exclude lines, as written.
	Matches, Includes, Excludes []string
	// RunAt is @run-at (default DocumentIdle).
	RunAt RunAt
	// NoFrames is @noframes: the script runs in top-level documents only.
	NoFrames bool
	// Source is the whole file.
	Source string
	// Ignored are the header keys this package does not act on (such as
	// @namespace, @author, @icon), in order, for a debug line.
	Ignored []string

	match, exclude pattern
}

// GrantError is the error of a script that asks for a userscript manager's
// API (@grant GM_xmlhttpRequest, @grant unsafeWindow, ...). Scripts here run
// with the page API only.
type GrantError struct {
	// File is the script's path, Grant the refused grant.
	File, Grant string
}

func (e *GrantError) Error() string {
	return fmt.Sprintf("userscript %s: @grant %s is refused: webmcp-cdp runs userscripts with the page's own APIs only (no GM_* API, no unsafeWindow); use `// @grant none` and call document.modelContext directly", e.File, e.Grant)
}

// The lines that open and close a userscript's header.
const (
	headerStart = "// ==UserScript=="
	headerEnd   = "// ==/UserScript=="
)

// Parse reads a userscript's header. file names the script in errors and
// gives its name when the header has no @name.
func Parse(file string, src []byte) (*Script, error) {
	if len(src) > MaxSize {
		return nil, fmt.Errorf("userscript %s is %d bytes, over the limit of %d: split it, or load what it needs from the page", file, len(src), MaxSize)
	}
	if !utf8.Valid(src) {
		return nil, fmt.Errorf("userscript %s is not UTF-8 text: save it as UTF-8", file)
	}
	text := string(bytes.TrimPrefix(src, []byte("\uFEFF")))
	lines := strings.Split(text, "\n")
	start := -1
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l == headerStart {
			start = i
			break
		}
		if l != "" && !strings.HasPrefix(l, "//") {
			break
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("%s is not a userscript: it has no `%s` header before its code (a userscript starts with that line, its `// @name`, `// @match` ... lines, and `%s`)", file, headerStart, headerEnd)
	}
	s := &Script{File: file, RunAt: DocumentIdle, Source: text}
	closed := false
	for _, raw := range lines[start+1:] {
		l := strings.TrimSpace(raw)
		if l == headerEnd {
			closed = true
			break
		}
		if l == "" {
			continue
		}
		rest, ok := strings.CutPrefix(l, "//")
		if !ok {
			return nil, fmt.Errorf("userscript %s: its header has a line that is not a comment (%q) before `%s`: end the header with that line", file, l, headerEnd)
		}
		rest = strings.TrimSpace(rest)
		key, ok := strings.CutPrefix(rest, "@")
		if !ok {
			continue // a plain comment inside the header
		}
		key, value, _ := strings.Cut(key, " ")
		if k, v, tab := strings.Cut(key, "\t"); tab {
			key, value = k, v+" "+value
		}
		if err := s.set(key, strings.TrimSpace(value)); err != nil {
			return nil, err
		}
	}
	if !closed {
		return nil, fmt.Errorf("userscript %s: its header never ends: add `%s` after its last `// @` line", file, headerEnd)
	}
	return s, s.compile()
}

// set takes one header line.
func (s *Script) set(key, value string) error {
	switch key {
	case "name", "match", "include", "exclude":
		if value == "" {
			return fmt.Errorf("userscript %s: @%s has no value", s.File, key)
		}
	}
	switch key {
	case "name":
		s.Name = value
	case "description":
		s.Description = value
	case "version":
		s.Version = value
	case "match":
		s.Matches = append(s.Matches, value)
	case "include":
		s.Includes = append(s.Includes, value)
	case "exclude":
		s.Excludes = append(s.Excludes, value)
	case "run-at":
		switch r := RunAt(value); r {
		case DocumentStart, DocumentEnd, DocumentIdle:
			s.RunAt = r
		default:
			return fmt.Errorf("userscript %s: @run-at %q is not one webmcp-cdp runs: use document-start, document-end or document-idle", s.File, value)
		}
	case "noframes":
		s.NoFrames = true
	case "grant":
		if value != "none" {
			return &GrantError{File: s.File, Grant: value}
		}
	default:
		s.Ignored = append(s.Ignored, key)
	}
	return nil
}

// compile checks the patterns and fills in the defaults.
func (s *Script) compile() error {
	if s.Name == "" {
		s.Name = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(s.File), ".js"), ".user")
	}
	if len(s.Matches)+len(s.Includes) == 0 {
		return fmt.Errorf("userscript %s has no @match or @include, so it would run on no page: add a line such as `// @match https://example.com/*`", s.File)
	}
	var alts []string
	for _, m := range s.Matches {
		re, err := matchPattern(m)
		if err != nil {
			return fmt.Errorf("userscript %s: @match %s: %w", s.File, m, err)
		}
		alts = append(alts, re)
	}
	for _, g := range s.Includes {
		re, err := globPattern(g)
		if err != nil {
			return fmt.Errorf("userscript %s: @include %s: %w", s.File, g, err)
		}
		alts = append(alts, re)
	}
	var err error
	if s.match, err = newPattern(alts); err != nil {
		return fmt.Errorf("userscript %s: %w", s.File, err)
	}
	alts = alts[:0]
	for _, x := range s.Excludes {
		// A Chrome match pattern where it is one, else a glob (scripts
		// written for Tampermonkey use both).
		re, err := matchPattern(x)
		if err != nil {
			if re, err = globPattern(x); err != nil {
				return fmt.Errorf("userscript %s: @exclude %s: %w", s.File, x, err)
			}
		}
		alts = append(alts, re)
	}
	if s.exclude, err = newPattern(alts); err != nil {
		return fmt.Errorf("userscript %s: %w", s.File, err)
	}
	return nil
}

// Runs says whether the script runs in a document at url: a @match or
// @include takes it and no @exclude does.
func (s *Script) Runs(url string) bool {
	return s.match.test(url) && !s.exclude.test(url)
}

// Pattern returns the sources of the regular expressions a document's URL
// must match (match) and must not match (exclude; "" for none). Both are
// valid in Go's regexp and JavaScript's RegExp and mean the same in each.
func (s *Script) Pattern() (match, exclude string) {
	return s.match.src, s.exclude.src
}
