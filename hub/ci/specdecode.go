package ci

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/webmcp-cdp/webmcp-cdp/internal/textdist"
	"go.yaml.in/yaml/v3"
)

// This file reads a spec from YAML (or JSON, which YAML 1.2 includes) with
// the place of every value, so that each mistake in a spec is reported as
// file:line:column. The YAML parser gives a node tree with positions; the
// tree is walked along the Go types of Spec, which catches unknown fields
// and values of the wrong kind where they are, and is then handed to
// encoding/json as plain data.

// Pos is a place in a spec file, 1-based.
type Pos struct {
	Line, Column int
}

// SpecError is a mistake in a spec, with its place.
type SpecError struct {
	// File is the spec file ("" when the spec was not read from a file).
	File string
	// Pos is where the mistake is; Column is 0 when the YAML library gave
	// only the line (syntax errors).
	Pos Pos
	// Path names the value, such as pages[0].calls[1].expect.
	Path string
	// Msg says what is wrong.
	Msg string
}

func (e *SpecError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
	} else {
		b.WriteString("spec")
	}
	if e.Pos.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Pos.Line)
		if e.Pos.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Pos.Column)
		}
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// decoder walks a YAML node tree along a Go type.
type decoder struct {
	pos map[string]Pos // by path
}

var (
	rawType       = reflect.TypeFor[json.RawMessage]()
	stringsType   = reflect.TypeFor[Strings]()
	durationType  = reflect.TypeFor[Duration]()
	patternsType  = reflect.TypeFor[Patterns]()
	yamlLineError = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
)

// decodeYAML parses data into v (a pointer to a struct) and returns the
// places of its values by path.
func decodeYAML(data []byte, v any) (map[string]Pos, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		msg := err.Error()
		if m := yamlLineError.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, &SpecError{Pos: Pos{Line: line}, Msg: "not valid YAML: " + m[2]}
		}
		return nil, &SpecError{Msg: "not valid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, &SpecError{Msg: "the spec is empty"}
	}
	d := &decoder{pos: make(map[string]Pos)}
	plain, err := d.value(root.Content[0], reflect.TypeOf(v).Elem(), "")
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(plain)
	if err != nil {
		return nil, &SpecError{Msg: err.Error()}
	}
	if err := json.Unmarshal(b, v); err != nil {
		return nil, &SpecError{Msg: err.Error()}
	}
	return d.pos, nil
}

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) error {
	return &SpecError{Pos: Pos{n.Line, n.Column}, Path: path, Msg: fmt.Sprintf(format, args...)}
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// value turns node n into plain data for type t, checking its shape.
func (d *decoder) value(n *yaml.Node, t reflect.Type, path string) (any, error) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	d.pos[path] = Pos{n.Line, n.Column}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case rawType:
		return d.plain(n, path)
	case stringsType:
		if n.Kind == yaml.ScalarNode {
			return n.Value, nil
		}
		return d.value(n, reflect.TypeFor[[]string](), path)
	case patternsType:
		switch n.Kind {
		case yaml.ScalarNode:
			return n.Value, nil
		case yaml.MappingNode:
			return d.value(n, reflect.TypeFor[map[string]string](), path)
		}
		return d.value(n, reflect.TypeFor[[]string](), path)
	case durationType:
		if n.Kind != yaml.ScalarNode {
			return nil, d.fail(n, path, "want a duration such as 5s or 500ms")
		}
		if _, err := parseDuration(n.Value); err != nil {
			return nil, d.fail(n, path, "%v", err)
		}
		return n.Value, nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil, d.fail(n, path, "want a mapping (key: value lines)")
		}
		fields := jsonFields(t)
		out := make(map[string]any)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if _, dup := out[k.Value]; dup {
				return nil, d.fail(k, path, "%q is given twice", k.Value)
			}
			f, ok := fields[k.Value]
			if !ok {
				return nil, d.fail(k, path, "unknown field %q%s", k.Value, suggest(k.Value, fields))
			}
			v, err := d.value(val, f, join(path, k.Value))
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return nil, d.fail(n, path, "want a list")
		}
		out := make([]any, 0, len(n.Content))
		for i, e := range n.Content {
			v, err := d.value(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil, d.fail(n, path, "want a mapping (key: value lines)")
		}
		out := make(map[string]any)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if _, dup := out[k.Value]; dup {
				return nil, d.fail(k, path, "%q is given twice", k.Value)
			}
			v, err := d.value(n.Content[i+1], t.Elem(), join(path, k.Value))
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	case reflect.String:
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
			return nil, d.fail(n, path, "want a string")
		}
		return n.Value, nil
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
			return nil, d.fail(n, path, "want true or false")
		}
		return b, nil
	case reflect.Int, reflect.Int64:
		var i int64
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
			return nil, d.fail(n, path, "want a whole number")
		}
		return i, nil
	case reflect.Float64:
		var f float64
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&f) != nil {
			return nil, d.fail(n, path, "want a number")
		}
		return f, nil
	}
	return d.plain(n, path)
}

// plain turns any node into JSON-able data: mappings with string keys,
// lists, and scalars by their YAML tag.
func (d *decoder) plain(n *yaml.Node, path string) (any, error) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	d.pos[path] = Pos{n.Line, n.Column}
	switch n.Kind {
	case yaml.MappingNode:
		out := make(map[string]any)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, d.fail(k, path, "a key must be a plain string")
			}
			if _, dup := out[k.Value]; dup {
				return nil, d.fail(k, path, "%q is given twice", k.Value)
			}
			v, err := d.plain(n.Content[i+1], join(path, k.Value))
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, e := range n.Content {
			v, err := d.plain(e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, d.fail(n, path, "%v", err)
	}
	if f, ok := v.(float64); ok && (f != f || f > 1e308 || f < -1e308) {
		return nil, d.fail(n, path, "%s is not a JSON number", n.Value)
	}
	return v, nil
}

// jsonFields maps the JSON names of a struct's fields to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := make(map[string]reflect.Type)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || name == "" {
			continue
		}
		out[name] = f.Type
	}
	return out
}

// suggest names the known fields, the closest first.
func suggest(got string, fields map[string]reflect.Type) string {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if strings.EqualFold(n, got) || textdist.Edit(n, got) <= 2 {
			return fmt.Sprintf(" (did you mean %q?)", n)
		}
	}
	return " (known: " + strings.Join(names, ", ") + ")"
}
