package cli

import (
	"github.com/spf13/pflag"

	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
)

// RegisterDialogs adds --dialogs (call flags, and connect's own).
func RegisterDialogs(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "dialogs", "fail", "a page dialog during a call, when the client cannot be asked (no elicitation): accept, dismiss, or fail (dismiss it and return an error)")
	OneOf(fs, "dialogs", mcpserver.DialogPolicies())
}
