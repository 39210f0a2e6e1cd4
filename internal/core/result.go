package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ResultKind says how to read Result.Value.
type ResultKind string

// The result kinds.
const (
	// KindString: the tool returned a string, Value.
	KindString ResultKind = "string"
	// KindJSON: the tool returned another value, whose JSON text is Value.
	KindJSON ResultKind = "json"
	// KindUndefined: the tool returned nothing.
	KindUndefined ResultKind = "undefined"
)

// Result is what a page's tool returned, as the browser read it.
type Result struct {
	// Kind says how to read Value.
	Kind ResultKind
	// Value is the returned value, see Kind.
	Value string
	// Truncated is the length of the value before the browser cut it, or 0.
	Truncated int
	// Err is the page's error message when the tool threw or was cancelled.
	Err string
	// Protocol says Err is a protocol error of an MCP-B page server (a
	// JSON-RPC error answering tools/call), not the tool's own failure.
	Protocol bool
	// PageTook is how long the tool's execute took in the page, when
	// PageTimed says it was measured (the browser was asked to time calls):
	// by the page's clock (coarse: 0.1 ms in most pages) for the polyfill
	// and for an MCP-B page server's tools/call, by the arrival of CDP's
	// WebMCP events for a native document.
	PageTook  time.Duration
	PageTimed bool
}

// Block is one content block of an Outcome, in MCP's content shapes.
type Block struct {
	// Type is MCP's content type: "text", "image", "audio", "resource_link"
	// or "resource".
	Type string
	// Text is the text of a "text" block.
	Text string
	// Raw is the whole block as JSON, for blocks other than text, as the
	// page gave it.
	Raw json.RawMessage
}

// Outcome is the result of a tool call as the hub hands it to a client:
// content blocks, optional structured content, and whether it is an error.
type Outcome struct {
	// Content is the content blocks, in order.
	Content []Block
	// Structured is the structured content, a JSON object, or nil.
	Structured json.RawMessage
	// IsError reports a failed call; Content says why, worded for a model.
	IsError bool
	// Meta is the result's _meta, or nil.
	Meta map[string]any
	// Broken says the call did not end with the tool's own answer: its
	// page server answered with a protocol error, or its page went away
	// (tab closed, navigated, crashed) or timed out under it. IsError is
	// then set and Content says why. A task reports it as failed rather
	// than completed.
	Broken bool
}

// Text returns an Outcome of one text block.
func Text(s string) Outcome {
	return Outcome{Content: []Block{{Type: "text", Text: s}}}
}

// Errorf returns an error Outcome whose one text block is the formatted
// message.
func Errorf(format string, args ...any) Outcome {
	o := Text(fmt.Sprintf(format, args...))
	o.IsError = true
	return o
}

// FirstText returns the text of the first text block, or "".
func (o Outcome) FirstText() string {
	for _, b := range o.Content {
		if b.Type == "text" {
			return b.Text
		}
	}
	return ""
}

// ErrPageCrashed is the error of a call whose page crashed (its renderer
// process died) while the call ran. The page's tools are gone until it is
// reloaded.
var ErrPageCrashed = errors.New("the page crashed")

// ErrNavigated is the error of a call whose document went away under it:
// the page navigated or reloaded, its frame was removed, or its tab
// closed. The browser says so at once; the hub tells a navigation from a
// closed tab by what it hears of the tab next, and words it as navigated
// when the tab stays.
var ErrNavigated = errors.New("the page navigated away")
