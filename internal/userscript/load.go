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
// Scripts are read once, from the local disk; two scripts may not have
// the same name, since tools carry it to say where they came from.
func Load(paths []string) ([]*Script, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%w: give a .user.js file, or a directory of them", err)
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		found, err := filepath.Glob(filepath.Join(p, "*.user.js"))
		if err != nil {
			return nil, fmt.Errorf("listing userscripts in %s: %w", p, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("userscript directory %s has no *.user.js file: name the scripts NAME.user.js, or give a script's file", p)
		}
		slices.Sort(found)
		files = append(files, found...)
	}
	var scripts []*Script
	seen := map[string]string{}
	for _, f := range files {
		s, err := readFile(f)
		if err != nil {
			return nil, err
		}
		if other, dup := seen[s.Name]; dup {
			if other == f {
				continue // the same file, given twice
			}
			return nil, fmt.Errorf("userscripts %s and %s are both named %q: give each its own @name", other, f, s.Name)
		}
		seen[s.Name] = f
		scripts = append(scripts, s)
	}
	return scripts, nil
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
