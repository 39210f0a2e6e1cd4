package ci

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// schemaFile is the published JSON Schema of specs.
const schemaFile = "../../docs/ci-spec.schema.json"

// exampleSpecs are the spec files of the repository, and the YAML blocks
// of docs/ci-spec.md that are whole specs (they have pages:).
func exampleSpecs(t *testing.T) map[string][]byte {
	t.Helper()
	out := make(map[string][]byte)
	files, _ := filepath.Glob("../../fixtures/ci/*.yaml")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = b
	}
	doc, err := os.ReadFile("../../docs/ci-spec.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(doc, -1)
	for i, m := range blocks {
		if regexp.MustCompile(`(?m)^pages:`).Match(m[1]) {
			out["docs/ci-spec.md block "+string(rune('1'+i))] = m[1]
		}
	}
	if len(out) < 4 {
		t.Fatalf("only %d example specs found", len(out))
	}
	return out
}

// TestSpecSchema: the published JSON Schema accepts every example spec
// that LoadSpec accepts, refuses mistakes, and names the same fields as the
// Go types.
func TestSpecSchema(t *testing.T) {
	c := jsonschema.NewCompiler()
	f, err := os.Open(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("ci-spec.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("ci-spec.schema.json")
	if err != nil {
		t.Fatalf("the schema does not compile: %v", err)
	}
	plain := func(src []byte) any {
		var n yaml.Node
		if err := yaml.Unmarshal(src, &n); err != nil {
			t.Fatal(err)
		}
		v, err := (&decoder{pos: map[string]Pos{}}).plain(n.Content[0], "")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for name, src := range exampleSpecs(t) {
		if _, err := ParseSpec(src); err != nil {
			t.Errorf("%s: LoadSpec refuses it: %v", name, err)
		}
		if err := schema.Validate(plain(src)); err != nil {
			t.Errorf("%s: the schema refuses it: %v", name, err)
		}
	}
	for _, bad := range []string{
		"pages:\n  - url: /\n    tols: [a]\n",
		"pages: []\n",
		"pages:\n  - url: /\n    lint: maybe\n",
		"pages:\n  - url: /\n    calls:\n      - tool: t\n        timeout: soon\n",
		"base: http://x/\nserve: .\npages:\n  - url: /\n",
		"pages:\n  - url: /\n    viewport: {width: 0, height: 1}\n",
	} {
		if err := schema.Validate(plain([]byte(bad))); err == nil {
			t.Errorf("the schema accepts %q", bad)
		}
	}

	// Every Go field is in the schema, and nothing else.
	var raw map[string]any
	b, _ := os.ReadFile(schemaFile)
	if err := yaml.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	defs := raw["$defs"].(map[string]any)
	cookie := defs["cookies"].(map[string]any)["items"]
	for _, tt := range []struct {
		name   string
		typ    reflect.Type
		schema any
	}{
		{"spec", reflect.TypeFor[Spec](), raw},
		{"page", reflect.TypeFor[PageSpec](), defs["page"]},
		{"call", reflect.TypeFor[CallSpec](), defs["call"]},
		{"expect", reflect.TypeFor[Expect](), defs["expect"]},
		{"viewport", reflect.TypeFor[Viewport](), defs["viewport"]},
		{"cookie", reflect.TypeFor[Cookie](), cookie},
	} {
		var inGo, inSchema []string
		for n := range jsonFields(tt.typ) {
			inGo = append(inGo, n)
		}
		for n := range tt.schema.(map[string]any)["properties"].(map[string]any) {
			inSchema = append(inSchema, n)
		}
		sort.Strings(inGo)
		sort.Strings(inSchema)
		if !reflect.DeepEqual(inGo, inSchema) {
			t.Errorf("%s: Go fields %s, schema properties %s", tt.name, strings.Join(inGo, ","), strings.Join(inSchema, ","))
		}
	}
}
