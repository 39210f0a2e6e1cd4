package hub

import (
	"bytes"
	"encoding/json"
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
// library. Each schema text has one compiled entry, compiled once (in the
// background when its tool appears, or at its first call if that comes
// first); a document holds its tools' entries, so a call neither looks the
// schema up nor parses it. A schema that does not compile is logged once and
// its tool is called without validation. The validator never loads
// anything: a $ref or $schema outside the schema itself makes the schema
// fail to compile.
type validator struct {
	logger *slog.Logger

	mu      sync.Mutex
	cache   map[string]*compiled // by schema text
	pending []pendingSchema      // waiting for the background compiler
	working bool                 // a background compiler runs
}

// pendingSchema is a schema waiting to be compiled, with the first tool
// that has it, for the log.
type pendingSchema struct {
	tool, url string
	c         *compiled
}

// compiled is one schema and, once compiled, the outcome. It is safe for
// concurrent use.
type compiled struct {
	text []byte

	once   sync.Once
	schema *jsonschema.Schema // nil when it did not compile
	err    error
	// logged is set once the schema's failure to compile was logged.
	logged atomic.Bool
	// broken is set when a reference cycle showed at validation: validation
	// is then off. Concurrent checks read it, so it is atomic.
	broken atomic.Bool
}

// get compiles the schema the first time and returns the outcome.
func (c *compiled) get() (*jsonschema.Schema, error) {
	c.once.Do(func() { c.schema, c.err = compile(c.text) })
	return c.schema, c.err
}

// maxCachedSchemas bounds the cache; when it is full it starts afresh (the
// entries that documents hold stay good).
const maxCachedSchemas = 4096

// schemaURL is the made-up location of the schema being compiled.
const schemaURL = "webmcp-cdp:///inputSchema.json"

func newValidator(logger *slog.Logger) *validator {
	return &validator{logger: logger, cache: make(map[string]*compiled)}
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
func compile(schema []byte) (s *jsonschema.Schema, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("the schema library failed on it: %v", r)
		}
	}()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("it is not JSON: %w", err)
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.UseLoader(refuseLoads{})
	if err := comp.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return comp.Compile(schemaURL)
}

// entry returns the entry of a schema text, making it (not yet compiled)
// if needed; nil for no schema. The second result is true when it is new.
func (v *validator) entry(schema []byte) (*compiled, bool) {
	if len(schema) == 0 {
		return nil, false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if c, ok := v.cache[string(schema)]; ok {
		return c, false
	}
	if len(v.cache) >= maxCachedSchemas {
		clear(v.cache)
	}
	c := &compiled{text: schema}
	v.cache[string(schema)] = c
	return c, true
}

// prepare returns the entry of a tool's schema (nil for none) and has a
// new one compiled in the background, so that a schema that does not
// compile is logged when its tool appears rather than at its first call.
func (v *validator) prepare(tool, url string, schema []byte) *compiled {
	c, fresh := v.entry(schema)
	if !fresh {
		return c
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.pending) >= maxCachedSchemas {
		return c // compiled at its first call instead
	}
	v.pending = append(v.pending, pendingSchema{tool: tool, url: url, c: c})
	if !v.working {
		v.working = true
		go v.work()
	}
	return c
}

// work compiles the pending schemas, then ends.
func (v *validator) work() {
	for {
		v.mu.Lock()
		if len(v.pending) == 0 {
			v.working = false
			v.pending = nil
			v.mu.Unlock()
			return
		}
		p := v.pending[0]
		v.pending[0] = pendingSchema{}
		v.pending = v.pending[1:]
		v.mu.Unlock()
		if _, err := p.c.get(); err != nil && !p.c.logged.Swap(true) {
			v.logger.Warn("a tool's inputSchema does not compile; the tool is served, and its calls go to the page unvalidated",
				"tool", p.tool, "url", p.url, "reason", firstLine(err.Error()))
		}
	}
}

// check validates args against the schema entry c (nil for no schema). It
// returns "" when the arguments may go to the page, or the reason they may
// not, naming the place in the arguments. Without a schema the arguments
// are only checked to be a JSON object, and not decoded.
func (v *validator) check(tool, url string, c *compiled, args []byte) string {
	if c == nil || c.broken.Load() {
		return objectOnly(args)
	}
	s, err := c.get()
	if err != nil {
		if !c.logged.Swap(true) {
			v.logger.Warn("a tool's inputSchema does not compile; the call goes to the page unvalidated",
				"tool", tool, "url", url, "reason", firstLine(err.Error()))
		}
		return objectOnly(args)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return "the arguments are not JSON: " + err.Error()
	}
	if _, ok := inst.(map[string]any); !ok {
		return "the arguments must be a JSON object"
	}
	return judge(c, s, inst, func() {
		v.logger.Warn("a tool's inputSchema refers to itself in a loop; its calls go to the page unvalidated", "tool", tool, "url", url)
	})
}

// judge validates inst against s, the schema of c, and returns "" when it
// fits, else where and why it does not. A reference cycle turns c's
// validation off and calls cycled the first time.
func judge(c *compiled, s *jsonschema.Schema, inst any, cycled func()) string {
	verr := validate(s, inst)
	if verr == nil {
		return ""
	}
	var ve *jsonschema.ValidationError
	if !errors.As(verr, &ve) {
		return verr.Error()
	}
	if hasRefCycle(ve) {
		if !c.broken.Swap(true) {
			cycled()
		}
		return ""
	}
	return describe(ve)
}

// objectOnly checks that args are a JSON object without decoding them; only
// on failure are they decoded, for the reason.
func objectOnly(args []byte) string {
	if json.Valid(args) {
		if t := bytes.TrimLeft(args, " \t\r\n"); len(t) > 0 && t[0] == '{' {
			return ""
		}
		return "the arguments must be a JSON object"
	}
	_, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err == nil {
		err = errors.New("invalid JSON")
	}
	return "the arguments are not JSON: " + err.Error()
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
