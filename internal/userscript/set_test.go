package userscript

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReload: reading the scripts again puts the good files in force,
// keeps the previous version of a file that now fails (and every script
// of a directory that cannot be listed), and counts what changed.
func TestReload(t *testing.T) {
	good := func(name, body string) string { return header("@name "+name, "@match https://a.example/*") + body }
	tests := []struct {
		name string
		// edit changes the directory between the start and the reload.
		edit        func(t *testing.T, dir string)
		want        []string // names in force, in order
		wantCounts  [4]int   // loaded, added, changed, removed
		wantRefused []string // a word of each refusal
		// from says which file each script in force was read from
		// (name → source), when it matters.
		from map[string]string
	}{
		{name: "nothing changed", edit: func(*testing.T, string) {}, want: []string{"A", "B"}, wantCounts: [4]int{2, 0, 0, 0}},
		{name: "one added, one changed", edit: func(t *testing.T, dir string) {
			write(t, dir, "b.user.js", good("B", "two();"))
			write(t, dir, "c.user.js", good("C", ""))
		}, want: []string{"A", "B", "C"}, wantCounts: [4]int{3, 1, 1, 0}, from: map[string]string{"B": "two();"}},
		{name: "one removed", edit: func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "a.user.js"))
		}, want: []string{"B"}, wantCounts: [4]int{1, 0, 0, 1}},
		{name: "a broken file keeps its previous version", edit: func(t *testing.T, dir string) {
			write(t, dir, "a.user.js", "console.log('no header');\n")
			write(t, dir, "b.user.js", good("B", "two();"))
		}, want: []string{"B", "A"}, wantCounts: [4]int{2, 0, 1, 0}, wantRefused: []string{"is not a userscript"},
			from: map[string]string{"A": "one();", "B": "two();"}},
		{name: "a new broken file is refused", edit: func(t *testing.T, dir string) {
			write(t, dir, "c.user.js", header("@name C", "@match https://a.example/*", "@grant GM_setValue"))
		}, want: []string{"A", "B"}, wantCounts: [4]int{2, 0, 0, 0}, wantRefused: []string{"@grant GM_setValue"}},
		{name: "a duplicate name is refused", edit: func(t *testing.T, dir string) {
			write(t, dir, "b.user.js", good("A", ""))
		}, want: []string{"A", "B"}, wantCounts: [4]int{2, 0, 0, 0}, wantRefused: []string{"both named"}},
		{name: "an empty directory keeps all", edit: func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "a.user.js"))
			os.Remove(filepath.Join(dir, "b.user.js"))
		}, want: []string{"A", "B"}, wantCounts: [4]int{2, 0, 0, 0}, wantRefused: []string{"has no *.user.js"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "a.user.js", good("A", "one();"))
			write(t, dir, "b.user.js", good("B", "one();"))
			prev, err := Load([]string{dir})
			if err != nil {
				t.Fatal(err)
			}
			tt.edit(t, dir)
			next, r := Reload([]string{dir}, prev)
			var got []string
			for _, s := range next {
				got = append(got, s.Name)
				if body, ok := tt.from[s.Name]; ok && !strings.HasSuffix(s.Source, body) {
					t.Errorf("%s in force is %q, want the one ending %q", s.Name, s.Source, body)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("in force %v, want %v", got, tt.want)
			}
			if c := [4]int{r.Loaded, r.Added, r.Changed, r.Removed}; c != tt.wantCounts {
				t.Errorf("loaded, added, changed, removed = %v, want %v", c, tt.wantCounts)
			}
			if len(r.Refused) != len(tt.wantRefused) {
				t.Fatalf("refused %v, want %d", r.Refused, len(tt.wantRefused))
			}
			for i, w := range tt.wantRefused {
				if !strings.Contains(r.Refused[i].Err.Error(), w) {
					t.Errorf("refusal %d = %v, want %q", i, r.Refused[i].Err, w)
				}
			}
		})
	}
}

func write(t *testing.T, dir, name, src string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSet: Replace puts the new scripts in force, numbered after every
// script before, and closes the channel those that follow the set wait on;
// a nil Set holds none.
func TestSet(t *testing.T) {
	a := &Script{Name: "A"}
	s := NewSet([]*Script{a})
	got, changed := s.Scripts()
	if len(got) != 1 || got[0] != a {
		t.Fatalf("Scripts = %v", got)
	}
	s.Replace(nil)
	select {
	case <-changed:
	default:
		t.Fatal("Replace did not close the channel")
	}
	if got, _ := s.Scripts(); len(got) != 0 {
		t.Errorf("after Replace, Scripts = %v", got)
	}
	s.Replace([]*Script{{Name: "B", File: "b.user.js"}, a})
	got, past, _ := s.Numbered()
	if len(got) != 2 || len(past) != 3 || past[0].Name != "A" || past[1] != (Ref{Name: "B", File: "b.user.js"}) || past[2].Name != "A" {
		t.Errorf("Numbered = %v, %v: want B and A in force as numbers 1 and 2, after A's 0", got, past)
	}
	var none *Set
	if got, past, ch := none.Numbered(); got != nil || past != nil || ch != nil {
		t.Error("a nil Set holds scripts")
	}
}

// TestRunsRecorded: each script keeps its count of documents and the last
// MaxRunURLs distinct URLs, the latest first.
func TestRunsRecorded(t *testing.T) {
	r := NewRuns()
	for i := range MaxRunURLs + 2 {
		r.Ran("A", fmt.Sprintf("https://a.example/%d", i))
	}
	r.Ran("A", "https://a.example/5")
	n, urls := r.Of("A")
	if n != MaxRunURLs+3 || len(urls) != MaxRunURLs || urls[0] != "https://a.example/5" || urls[1] != fmt.Sprintf("https://a.example/%d", MaxRunURLs+1) {
		t.Errorf("Of(A) = %d %v", n, urls)
	}
	if slices.Contains(urls, "https://a.example/0") {
		t.Error("the oldest URL was kept past the bound")
	}
	st := Report([]*Script{{Name: "A", File: "a.user.js", Matches: []string{"m"}, Includes: []string{"i"}, RunAt: DocumentEnd}, {Name: "B"}}, r)
	if len(st) != 2 || st[0].Ran != n || !slices.Equal(st[0].Matches, []string{"m", "i"}) || st[1].Ran != 0 || st[1].Documents != nil {
		t.Errorf("Report = %+v", st)
	}
	var none *Runs
	none.Ran("A", "x")
	if n, _ := none.Of("A"); n != 0 {
		t.Error("a nil Runs recorded a run")
	}
}
