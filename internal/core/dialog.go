package core

import "context"

// Dialog is a JavaScript dialog (alert, confirm, prompt, beforeunload) that
// a page opened while a tool call ran.
type Dialog struct {
	// Type is "alert", "confirm", "prompt" or "beforeunload".
	Type string
	// Message is the page's text.
	Message string
	// DefaultPrompt is the default answer of a prompt.
	DefaultPrompt string
	// URL is the page's.
	URL string
}

// DialogAnswer is how a dialog is closed.
type DialogAnswer struct {
	// Accept presses OK (true) or Cancel (false).
	Accept bool
	// Text is the answer to a prompt.
	Text string
}

// DialogFunc answers a dialog. It may block until a person answers, or until
// ctx ends (then the dialog is dismissed).
type DialogFunc func(ctx context.Context, d Dialog) DialogAnswer

type dialogKey struct{}

// WithDialogFunc returns a context whose tool calls send the dialogs their
// page opens to f.
func WithDialogFunc(ctx context.Context, f DialogFunc) context.Context {
	return context.WithValue(ctx, dialogKey{}, f)
}

// DialogFuncFrom returns the DialogFunc of ctx, or nil.
func DialogFuncFrom(ctx context.Context) DialogFunc {
	f, _ := ctx.Value(dialogKey{}).(DialogFunc)
	return f
}
