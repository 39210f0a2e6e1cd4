package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The layers of docs/architecture.md, by folder. A package may import
// packages of its own folder and of the folders listed for it; nothing
// else of the module. cdp and hub sit side by side above internal: cdp
// speaks CDP and supplies browsers, hub serves tools and routes calls, and
// neither knows the other (cmd wires them together). fixtures and e2e
// stand aside: fixtures (the demo and test pages) imports nothing of the
// module, and nothing imports e2e.
var layers = map[string][]string{
	"internal": nil,
	"polyfill": {"internal"},
	"cdp":      {"internal", "polyfill"},
	"hub":      {"internal"},
	"cmd":      {"internal", "polyfill", "cdp", "hub", "fixtures"},
	"fixtures": nil,
	"e2e":      {"internal", "polyfill", "cdp", "hub", "cmd", "fixtures"},
}

// listedPackage is what layering reads of `go list -json`.
type listedPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// upwardImports returns, for the packages of module mod, each import that
// breaks the layers, worded for the reader: which package imports which,
// and what its folder may import.
func upwardImports(mod string, pkgs []listedPackage) []string {
	folder := func(path string) (string, bool) {
		rest, ok := strings.CutPrefix(path, mod+"/")
		if !ok {
			return "", false
		}
		top, _, _ := strings.Cut(rest, "/")
		return top, true
	}
	var out []string
	for _, p := range pkgs {
		from, ok := folder(p.ImportPath)
		if !ok {
			continue
		}
		allowed, known := layers[from]
		if !known {
			out = append(out, fmt.Sprintf("%s is in folder %s/, which has no place in the layers: add it to docs/architecture.md and to layers in cmd/webmcp-cdp/layers_test.go", p.ImportPath, from))
			continue
		}
		for _, imp := range p.Imports {
			to, ok := folder(imp)
			if !ok || to == from || slices.Contains(allowed, to) {
				continue
			}
			out = append(out, fmt.Sprintf("%s imports %s: a package in %s/ may import only %s/ and %s", p.ImportPath, imp, from, from, listOr(allowed)))
		}
		if from == "cdp" || from == "polyfill" {
			for _, d := range p.Deps {
				if strings.HasPrefix(d, "github.com/modelcontextprotocol/") {
					out = append(out, fmt.Sprintf("%s depends on %s: MCP types live at the edge (hub/mcpserver, the relay), not in %s/", p.ImportPath, d, from))
					break
				}
			}
		}
	}
	return out
}

func listOr(folders []string) string {
	if len(folders) == 0 {
		return "nothing else of the module"
	}
	quoted := make([]string, len(folders))
	for i, f := range folders {
		quoted[i] = f + "/"
	}
	return strings.Join(quoted, ", ")
}

// TestLayers (issue 37): no package of the module imports upward, read
// from `go list -deps` of the whole module, and `go list -deps ./hub/...`
// lists no cdp package.
func TestLayers(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports,Deps,Module", "./...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	modOut, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	mod := strings.TrimSpace(string(modOut))
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list listed %d packages; the module has more", len(pkgs))
	}
	var ours int
	for _, p := range pkgs {
		if strings.HasPrefix(p.ImportPath, mod+"/") {
			ours++
		}
		if strings.HasPrefix(p.ImportPath, mod+"/hub") {
			for _, d := range p.Deps {
				if strings.HasPrefix(d, mod+"/cdp") {
					t.Errorf("%s depends on %s: hub knows tools and routing, not CDP", p.ImportPath, d)
				}
			}
		}
	}
	if ours < 10 {
		t.Fatalf("go list listed %d packages of %s; the module has more", ours, mod)
	}
	for _, msg := range upwardImports(mod, pkgs) {
		t.Error(msg)
	}
}

func TestUpwardImports(t *testing.T) {
	t.Parallel()
	const m = "example.com/m"
	for _, tc := range []struct {
		name string
		pkgs []listedPackage
		want []string // substrings, one per message
	}{
		{"down and aside", []listedPackage{
			{ImportPath: m + "/cmd/x", Imports: []string{m + "/hub", m + "/cdp/fleet", m + "/fixtures", "fmt"}},
			{ImportPath: m + "/hub/ci", Imports: []string{m + "/hub", m + "/internal/core"}},
			{ImportPath: m + "/cdp", Imports: []string{m + "/polyfill", m + "/internal/core"}},
		}, nil},
		{"cdp to hub", []listedPackage{{ImportPath: m + "/cdp/fleet", Imports: []string{m + "/hub"}}},
			[]string{"cdp/fleet imports example.com/m/hub: a package in cdp/ may import only cdp/ and internal/, polyfill/"}},
		{"hub to cdp", []listedPackage{{ImportPath: m + "/hub/telemetry", Imports: []string{m + "/cdp"}}},
			[]string{"hub/telemetry imports example.com/m/cdp"}},
		{"internal upward", []listedPackage{{ImportPath: m + "/internal/x", Imports: []string{m + "/hub"}}},
			[]string{"may import only internal/ and nothing else of the module"}},
		{"fixtures imports", []listedPackage{{ImportPath: m + "/fixtures", Imports: []string{m + "/internal/core"}}},
			[]string{"fixtures imports"}},
		{"MCP in cdp", []listedPackage{{ImportPath: m + "/cdp", Deps: []string{"github.com/modelcontextprotocol/go-sdk/mcp"}}},
			[]string{"MCP types live at the edge"}},
		{"new folder", []listedPackage{{ImportPath: m + "/util"}},
			[]string{"folder util/, which has no place in the layers"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := upwardImports(m, tc.pkgs)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d messages %q, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("message %q does not say %q", got[i], w)
				}
			}
		})
	}
}

// TestMainIsThin (issue 37): package main turns flags into options and
// wires; it stays within maxMainLines of non-test Go, and no function of it
// settles or waits out a quiet period (hub/settle does).
func TestMainIsThin(t *testing.T) {
	t.Parallel()
	const maxMainLines = 2000
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(src, []byte("\n"))
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok {
				if n := strings.ToLower(fn.Name.Name); strings.Contains(n, "settle") || strings.Contains(n, "quiet") {
					t.Errorf("%s: func %s settles in package main; the settle rule is hub/settle's", name, fn.Name.Name)
				}
			}
		}
	}
	if lines > maxMainLines {
		t.Errorf("package main has %d lines of non-test Go, more than %d: move what dials, settles, supervises or serves into a package under cmd/webmcp-cdp/ (serve, cli, ...)", lines, maxMainLines)
	}
}
