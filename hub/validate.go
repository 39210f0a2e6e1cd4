package hub

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// validator checks call arguments against tools' input schemas (JSON Schema
// draft 2020-12 unless the schema's $schema names another draft), with
// github.com/santhosh-tekuri/jsonschema/v6; docs/decisions says why that
// library. Compiled schemas are cached by their text. A schema that does not
// compile is logged once and its tool is called without validation. The
// validator never loads anything: a $ref or $schema outside the schema
// itself makes the schema fail to compile.
type validator struct {
	logger *slog.Logger

	mu      sync.Mutex
	cache   map[string]*compiled
	pending []string        // tool, URL and schema waiting for the background compiler
	queued  map[string]bool // the schemas in pending
	working bool            // a background compiler runs
}

// compiled is the outcome of compiling one schema.
type compiled struct {
	schema *jsonschema.Schema // nil when it did not compile
	err    error
	// broken is set when a reference cycle showed at validation: validation
	// is then off. Concurrent checks read it, so it is atomic.
	broken atomic.Bool
}

// maxCachedSchemas bounds the cache; when it is full it starts afresh.
const maxCachedSchemas = 4096

// schemaURL is the made-up location of the schema being compiled.
const schemaURL = "webmcp-cdp:///inputSchema.json"

func newValidator(logger *slog.Logger) *validator {
	return &validator{logger: logger, cache: make(map[string]*compiled), queued: make(map[string]bool)}
}

// refuseLoads is the compiler's loader: it loads nothing, so a page's schema
// can make us read neither files nor the network.
type refuseLoads struct{}

// Load implements jsonschema.URLLoader.
func (refuseLoads) Load(url string) (any, error) {
	return nil, fmt.Errorf("schemas outside the tool's own inputSchema are not loaded (%s)", url)
}

// compile compiles one schema, turning a panic of the library into an error
// (the schema comes from a page).
func compile(schema []byte) (c *compiled) {
	defer func() {
		if r := recover(); r != nil {
			c = &compiled{err: fmt.Errorf("the schema library failed on it: %v", r)}
		}
	}()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return &compiled{err: fmt.Errorf("it is not JSON: %w", err)}
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.UseLoader(refuseLoads{})
	if err := comp.AddResource(schemaURL, doc); err != nil {
		return &compiled{err: err}
	}
	s, err := comp.Compile(schemaURL)
	if err != nil {
		return &compiled{err: err}
	}
	return &compiled{schema: s}
}

// get returns the compiled schema, compiling it now if needed. The second
// result is false when the schema was already known.
func (v *validator) get(schema []byte) (*compiled, bool) {
	key := string(schema)
	v.mu.Lock()
	c, ok := v.cache[key]
	v.mu.Unlock()
	if ok {
		return c, false
	}
	c = compile(schema)
	v.mu.Lock()
	defer v.mu.Unlock()
	if old, ok := v.cache[key]; ok {
		return old, false
	}
	if len(v.cache) >= maxCachedSchemas {
		clear(v.cache)
	}
	v.cache[key] = c
	return c, true
}

// prepare compiles schemas in the background, so that a schema that does
// not compile is logged when its tool appears rather than at its first call.
func (v *validator) prepare(tool, url string, schema []byte) {
	if len(schema) == 0 {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.cache[string(schema)]; ok || v.queued[string(schema)] || len(v.pending) >= maxCachedSchemas {
		return
	}
	v.queued[string(schema)] = true
	v.pending = append(v.pending, tool+"\x00"+url+"\x00"+string(schema))
	if v.working {
		return
	}
	v.working = true
	go v.work()
}

// work compiles the pending schemas, then ends.
func (v *validator) work() {
	for {
		v.mu.Lock()
		if len(v.pending) == 0 {
			v.working = false
			v.mu.Unlock()
			return
		}
		item := v.pending[0]
		v.pending = v.pending[1:]
		tool, rest, _ := strings.Cut(item, "\x00")
		url, schema, _ := strings.Cut(rest, "\x00")
		delete(v.queued, schema)
		v.mu.Unlock()
		if c, fresh := v.get([]byte(schema)); fresh && c.err != nil {
			v.logger.Warn("a tool's inputSchema does not compile; the tool is served, and its calls go to the page unvalidated",
				"tool", tool, "url", url, "reason", firstLine(c.err.Error()))
		}
	}
}

// check validates args (a JSON object) against schema. It returns "" when
// the arguments may go to the page, or the reason they may not, naming the
// place in the arguments.
func (v *validator) check(tool, url string, schema, args []byte) string {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return "the arguments are not JSON: " + err.Error()
	}
	if _, ok := inst.(map[string]any); !ok {
		return "the arguments must be a JSON object"
	}
	if len(schema) == 0 {
		return ""
	}
	c, fresh := v.get(schema)
	if c.err != nil || c.broken.Load() {
		if fresh {
			v.logger.Warn("a tool's inputSchema does not compile; the call goes to the page unvalidated",
				"tool", tool, "url", url, "reason", firstLine(c.err.Error()))
		}
		return ""
	}
	verr := validate(c.schema, inst)
	if verr == nil {
		return ""
	}
	var ve *jsonschema.ValidationError
	if !errors.As(verr, &ve) {
		return verr.Error()
	}
	if hasRefCycle(ve) {
		if !c.broken.Swap(true) {
			v.logger.Warn("a tool's inputSchema refers to itself in a loop; its calls go to the page unvalidated", "tool", tool, "url", url)
		}
		return ""
	}
	return describe(ve)
}

// validate runs the validator, turning a panic into an error.
func validate(s *jsonschema.Schema, inst any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the schema library failed: %v", r)
		}
	}()
	return s.Validate(inst)
}

func hasRefCycle(e *jsonschema.ValidationError) bool {
	if _, ok := e.ErrorKind.(*kind.RefCycle); ok {
		return true
	}
	for _, c := range e.Causes {
		if hasRefCycle(c) {
			return true
		}
	}
	return false
}

// describe words a validation error for the model: each failing place in
// the arguments, as a JSON pointer ("/" is the whole object), and why; at
// most five.
func describe(ve *jsonschema.ValidationError) string {
	p := message.NewPrinter(language.English)
	var lines []string
	seen := map[string]bool{}
	emit := func(line string) {
		if !seen[line] {
			seen[line] = true
			lines = append(lines, line)
		}
	}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		switch e.ErrorKind.(type) {
		case *kind.AnyOf, *kind.OneOf:
			// Say what each alternative missed, as alternatives.
			var alts []string
			var leaves func(c *jsonschema.ValidationError)
			leaves = func(c *jsonschema.ValidationError) {
				if len(c.Causes) == 0 {
					alts = append(alts, c.ErrorKind.LocalizedString(p))
				}
				for _, cc := range c.Causes {
					leaves(cc)
				}
			}
			for _, c := range e.Causes {
				leaves(c)
			}
			line := "at " + pointer(e.InstanceLocation) + ": " + e.ErrorKind.LocalizedString(p)
			if len(alts) > 0 {
				line += " (" + strings.Join(alts, ", or ") + ")"
			}
			emit(line)
			return
		}
		if len(e.Causes) == 0 {
			emit("at " + pointer(e.InstanceLocation) + ": " + e.ErrorKind.LocalizedString(p))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(lines) == 0 {
		return firstLine(ve.Error())
	}
	if len(lines) > 5 {
		lines = append(lines[:5], fmt.Sprintf("and %d more", len(lines)-5))
	}
	return strings.Join(lines, "; ")
}

// pointer is a JSON pointer to a place in the arguments; "/" is the whole.
func pointer(loc []string) string {
	if len(loc) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(tok))
	}
	return b.String()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
