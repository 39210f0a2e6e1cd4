package ci

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaURL is the made-up location of the schema being compiled.
const schemaURL = "webmcp-cdp:///inputSchema.json"

// refuseLoads is the compiler's loader: it loads nothing, so a page's
// schema makes CI mode read neither files nor the network.
type refuseLoads struct{}

// Load implements jsonschema.URLLoader.
func (refuseLoads) Load(url string) (any, error) {
	return nil, fmt.Errorf("schemas outside the tool's own inputSchema are not loaded (%s)", url)
}

// CompileSchema reports whether raw compiles as a JSON Schema: draft
// 2020-12 unless its $schema names another draft, checked against the
// draft's meta-schema (keywords with the wrong kind of value, unknown type
// names, patterns that are not regular expressions), with every $ref
// resolved inside the schema itself.
//
// It compiles the way the hub's input validation does (hub/validate.go:
// github.com/santhosh-tekuri/jsonschema/v6, nothing loaded from outside),
// so a schema that fails here is one whose tool's calls reach the page
// unvalidated. The hub keeps its compiler to itself, hence this copy.
func CompileSchema(raw json.RawMessage) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the schema library failed on it: %v", r)
		}
	}()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("it is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoads{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return err
	}
	_, err = c.Compile(schemaURL)
	return err
}

// oneLine words a compile error on one line: the places in the schema and
// what is wrong there, without the library's headers and the lines that
// only say a combinator (allOf, anyOf) failed.
func oneLine(msg string) string {
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- "))
		switch {
		case l == "",
			strings.Contains(l, "is not valid against metaschema"),
			strings.HasPrefix(l, "jsonschema validation failed with"),
			strings.HasSuffix(l, "' failed"):
			continue
		}
		parts = append(parts, l)
	}
	if len(parts) == 0 {
		return strings.TrimSpace(msg)
	}
	return strings.ReplaceAll(strings.Join(parts, "; "), schemaURL, "inputSchema")
}

// The keywords whose values are schemas, by shape.
var (
	schemaMapKeywords    = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	schemaSingleKeywords = []string{"items", "additionalItems", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	schemaListKeywords   = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
)

// walkSchema calls f on s and on each of its subschemas (objects only), with
// the JSON Pointer of each from the root.
func walkSchema(s map[string]any, path string, f func(path string, s map[string]any)) {
	f(path, s)
	for _, k := range schemaMapKeywords {
		if m, ok := s[k].(map[string]any); ok {
			keys := make([]string, 0, len(m))
			for name := range m {
				keys = append(keys, name)
			}
			sort.Strings(keys)
			for _, name := range keys {
				if sub, ok := m[name].(map[string]any); ok {
					walkSchema(sub, path+"/"+k+"/"+escapePointer(name), f)
				}
			}
		}
	}
	for _, k := range schemaSingleKeywords {
		if sub, ok := s[k].(map[string]any); ok {
			walkSchema(sub, path+"/"+k, f)
		}
	}
	for _, k := range schemaListKeywords {
		if list, ok := s[k].([]any); ok {
			for i, v := range list {
				if sub, ok := v.(map[string]any); ok {
					walkSchema(sub, fmt.Sprintf("%s/%s/%d", path, k, i), f)
				}
			}
		}
	}
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
