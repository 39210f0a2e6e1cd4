package hub

import "context"

// callerKey keys who asks for a call in a context.
type callerKey struct{}

// WithCaller returns ctx naming who asks for the calls made with it (the
// subject and client of an OAuth token, say), for their CallRecords.
func WithCaller(ctx context.Context, who string) context.Context {
	return context.WithValue(ctx, callerKey{}, who)
}

// Caller returns who ctx says asks for a call, or "".
func Caller(ctx context.Context) string {
	who, _ := ctx.Value(callerKey{}).(string)
	return who
}
