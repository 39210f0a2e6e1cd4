package mcpserver

import (
	"context"
	"fmt"
	"time"
)

// Person is who a request comes from, as its OAuth token says. Two
// requests with the same Person reach the same space; two with different
// Persons never share one.
type Person struct {
	// Issuer is the authorization server that issued the token.
	Issuer string
	// Subject is the token's subject (sub): "client:<client_id>" for a
	// token a client got for itself (client credentials), with no sub; a
	// sub that itself begins with "client:" or "sub:" is "sub:<sub>", so
	// that no subject passes for a client. It is as the token has it, any
	// bytes and any length: hash it before it goes into a file name, a
	// log line or a trace.
	Subject string
}

// Spaces gives each person a space of their own: a Server over their own
// hub and browser context. It is the HTTP edge's way to serve a team
// (HTTPOptions.Spaces, ServeSpaces).
type Spaces interface {
	// Space returns the Server of p's space, opening the space at their
	// first request (ctx bounds the opening). It returns a
	// *SpacesFullError when a newcomer's space cannot be opened because
	// the hub holds its maximum of spaces.
	Space(ctx context.Context, p Person) (*Server, error)
	// Count is how many spaces are open.
	Count() int
}

// SpacesFullError says no space can be opened for a newcomer: the hub
// holds its maximum of spaces (--max-spaces). The HTTP edge answers it
// with 503 and a Retry-After of RetryAfter (at least a second).
type SpacesFullError struct {
	// Max is the most spaces the hub holds at once.
	Max int
	// RetryAfter is when the newcomer may try again; 0 means soon.
	RetryAfter time.Duration
}

// Error says the hub is full and to try again later.
func (e *SpacesFullError) Error() string {
	return fmt.Sprintf("the hub holds its maximum of %d spaces: try again later", e.Max)
}
