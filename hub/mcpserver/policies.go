package mcpserver

import (
	"fmt"
	"slices"
)

// The person-in-the-loop policies of --dialogs and --confirm (hitl.go runs
// them).

// DialogPolicy says what happens to a page dialog during a call whose
// client cannot be asked (it has no elicitation).
type DialogPolicy string

// The dialog policies.
const (
	// DialogsFail dismisses the dialog and makes the call an error that says
	// a dialog needed a person.
	DialogsFail DialogPolicy = "fail"
	// DialogsAccept presses OK (a prompt gets its default text).
	DialogsAccept DialogPolicy = "accept"
	// DialogsDismiss presses Cancel.
	DialogsDismiss DialogPolicy = "dismiss"
)

// ConfirmPolicy says which tools need the client's confirmation first.
type ConfirmPolicy string

// The confirm policies.
const (
	// ConfirmNone asks for nothing.
	ConfirmNone ConfirmPolicy = "none"
	// ConfirmConsequential asks before tools marked consequentialHint.
	ConfirmConsequential ConfirmPolicy = "consequential"
	// ConfirmWrites asks before every tool not marked readOnlyHint.
	ConfirmWrites ConfirmPolicy = "writes"
)

// DialogPolicies are the values --dialogs takes (shell completion offers
// them).
func DialogPolicies() []DialogPolicy {
	return []DialogPolicy{DialogsFail, DialogsAccept, DialogsDismiss}
}

// ConfirmPolicies are the values --confirm takes (shell completion offers
// them).
func ConfirmPolicies() []ConfirmPolicy {
	return []ConfirmPolicy{ConfirmNone, ConfirmConsequential, ConfirmWrites}
}

// ParseDialogPolicy checks a --dialogs value.
func ParseDialogPolicy(s string) (DialogPolicy, error) {
	if p := DialogPolicy(s); slices.Contains(DialogPolicies(), p) {
		return p, nil
	}
	return "", fmt.Errorf("--dialogs %q: use accept, dismiss or fail", s)
}

// ParseConfirmPolicy checks a --confirm value.
func ParseConfirmPolicy(s string) (ConfirmPolicy, error) {
	if p := ConfirmPolicy(s); slices.Contains(ConfirmPolicies(), p) {
		return p, nil
	}
	return "", fmt.Errorf("--confirm %q: use consequential, writes or none", s)
}
