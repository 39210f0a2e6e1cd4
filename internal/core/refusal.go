package core

import (
	"fmt"
	"time"
)

// Reason is why a tool was not admitted to the catalog: a code that the
// status page, CI lint and logs all read the same way.
type Reason string

// The reasons.
const (
	// ReasonName: the name is empty, too long or has characters outside
	// A-Z a-z 0-9 _ . -.
	ReasonName Reason = "name"
	// ReasonDescription: the description is empty.
	ReasonDescription Reason = "description"
	// ReasonSize: the description, title, a schema, the _meta or the icons
	// are over their size limit.
	ReasonSize Reason = "size"
	// ReasonSchema: the inputSchema or outputSchema is not a JSON object of
	// type "object", or the _meta is not an object or the icons not an
	// array.
	ReasonSchema Reason = "schema"
	// ReasonDuplicate: another tool of the document has the same name.
	ReasonDuplicate Reason = "duplicate"
	// ReasonTooMany: the document has more tools than the limit.
	ReasonTooMany Reason = "too-many"
	// ReasonRate: the tab registered new tool names faster than allowed.
	ReasonRate Reason = "rate"
	// ReasonOrigin: the origin is denied by the origin policy.
	ReasonOrigin Reason = "origin"
	// ReasonPermissions: the document may not use tools under the
	// Permissions Policy "tools" (a cross-origin frame its <iframe> did not
	// delegate it to, or a Permissions-Policy header that disables it).
	ReasonPermissions Reason = "permissions-policy"
	// ReasonPage: the page script could not hand the tool over (its
	// definition could not be read or encoded).
	ReasonPage Reason = "page"
)

// Refusal is a tool that was not admitted, and why.
type Refusal struct {
	// Reason is the code.
	Reason Reason `json:"reason"`
	// Tool is the page's name for the tool; "*" for a refusal of several
	// tools (those over a limit).
	Tool string `json:"tool"`
	// Detail says what was wrong, worded for a person.
	Detail string `json:"detail"`
	// Origin and URL are the document's.
	Origin string `json:"origin,omitempty"`
	URL    string `json:"url,omitempty"`
	// Tab is the browser's id of the document's tab.
	Tab string `json:"-"`
	// At is when the refusal was made.
	At time.Time `json:"at"`
}

// String words the refusal for a log or a report.
func (r Refusal) String() string {
	if r.Tool == "*" {
		return fmt.Sprintf("%s (%s)", r.Detail, r.Reason)
	}
	return fmt.Sprintf("tool %q: %s (%s)", r.Tool, r.Detail, r.Reason)
}
