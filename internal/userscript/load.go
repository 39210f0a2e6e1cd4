package userscript

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// Load reads the userscripts at paths: a file is one script, a directory
// gives every *.user.js in it (not its subdirectories), in name order.
// Scripts are read from the local disk; two scripts may not have the same
// name, since tools carry it to say where they came from. The first file
// that cannot be used fails the whole load.
func Load(paths []string) ([]*Script, error) {
	scripts, refused := load(paths)
	if len(refused) > 0 {
		return nil, refused[0].Err
	}
	return scripts, nil
}

// Refusal is a path given, or a file in a directory given, that could not
// be used as a userscript, and why.
type Refusal struct {
	// Path is the file, or the path given when it could not be listed.
	Path string
	// Err says why, naming the file.
	Err error
}

// load reads what it can of paths, as Load does, and says what it could
// not use: the scripts are in the order of paths and, within a directory,
// of names.
func load(paths []string) ([]*Script, []Refusal) {
	var files []string
	var refused []Refusal
	for _, p := range paths {
		found, err := list(p)
		if err != nil {
			refused = append(refused, Refusal{Path: p, Err: err})
			continue
		}
		files = append(files, found...)
	}
	var scripts []*Script
	seen := map[string]string{}
	for _, f := range files {
		s, err := readFile(f)
		if err != nil {
			refused = append(refused, Refusal{Path: f, Err: err})
			continue
		}
		if other, dup := seen[s.Name]; dup {
			if other != f { // else the same file, given twice
				refused = append(refused, Refusal{Path: f, Err: fmt.Errorf("userscripts %s and %s are both named %q: give each its own @name", other, f, s.Name)})
			}
			continue
		}
		seen[s.Name] = f
		scripts = append(scripts, s)
	}
	return scripts, refused
}

// list returns the userscript files at p: p itself, or a directory's
// *.user.js files in name order.
func list(p string) ([]string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("%w: give a .user.js file, or a directory of them", err)
	}
	if !st.IsDir() {
		return []string{p}, nil
	}
	found, err := filepath.Glob(filepath.Join(p, "*.user.js"))
	if err != nil {
		return nil, fmt.Errorf("listing userscripts in %s: %w", p, err)
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("userscript directory %s has no *.user.js file: name the scripts NAME.user.js, or give a script's file", p)
	}
	slices.Sort(found)
	return found, nil
}

func readFile(name string) (*Script, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("reading a userscript: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading a userscript: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("userscript %s is not a regular file", name)
	}
	// One byte over the limit is enough for Parse to refuse the file.
	src, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading userscript %s: %w", name, err)
	}
	return Parse(name, src)
}
