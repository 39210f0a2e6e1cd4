package bench

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hintsRows adds the cost of --client-hints (docs/agent-surface.md): the
// same echo call over stdio, each kind paired with raw CDP calls into the
// bench page, in a server launched without the flag and in one launched
// with it. With the flag a call that carries no hints, or the hints the tab
// already shows, should cost what a call costs without the flag; a call
// with a position pays for the permission granted and taken back around
// it; a call whose hints differ from the last one's pays for the overrides.
func hintsRows(ctx context.Context, opts Options, page string, raw func(context.Context) error, add func(what, value string)) error {
	plain, err := startCommand(ctx, opts.Binary, []string{"launch", "--headless", "--log-level", "warn", page}, nil)
	if err != nil {
		return err
	}
	defer plain.close()
	hinted, err := startCommand(ctx, opts.Binary, []string{"launch", "--headless", "--log-level", "warn", "--client-hints", page}, nil)
	if err != nil {
		return err
	}
	defer hinted.close()
	echo, err := waitTool(ctx, plain.cs, "echo_0", 10)
	if err != nil {
		return err
	}
	if _, err := waitTool(ctx, hinted.cs, "echo_0", 10); err != nil {
		return err
	}
	paris := mcp.Meta{"openai/locale": "fr-FR", "openai/userLocation": map[string]any{"timezone": "Europe/Paris"}}
	tokyo := mcp.Meta{"openai/locale": "ja-JP", "openai/userLocation": map[string]any{"timezone": "Asia/Tokyo"}}
	placed := mcp.Meta{"openai/locale": "fr-FR", "openai/userLocation": map[string]any{
		"timezone": "Europe/Paris", "latitude": 48.8566, "longitude": 2.3522,
	}}
	for _, kind := range []struct {
		what string
		cs   *mcp.ClientSession
		meta func(i int) mcp.Meta
	}{
		{"stdio without --client-hints", plain.cs, nil},
		{"stdio with --client-hints, a call with no hints", hinted.cs, nil},
		{"stdio with --client-hints, the same locale and time zone each call", hinted.cs, func(int) mcp.Meta { return paris }},
		{"stdio with --client-hints, the same hints and a position each call", hinted.cs, func(int) mcp.Meta { return placed }},
		{"stdio with --client-hints, hints that change each call", hinted.cs, func(i int) mcp.Meta {
			if i%2 == 0 {
				return tokyo
			}
			return paris
		}},
	} {
		if err := pairedRows(ctx, kind.what, opts.Calls, hintedCaller(kind.cs, echo, kind.meta), raw, add); err != nil {
			return err
		}
	}
	return nil
}

// hintedCaller returns a func that calls tool name on cs, the i-th call
// with the _meta meta(i) (none when meta is nil), and fails on an error
// result.
func hintedCaller(cs *mcp.ClientSession, name string, meta func(i int) mcp.Meta) func(context.Context) error {
	if meta == nil {
		return caller(cs, name)
	}
	i := 0
	return func(ctx context.Context) error {
		params := &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "x"}, Meta: meta(i)}
		i++
		res, err := cs.CallTool(ctx, params)
		return callOutcome(name, res, err)
	}
}
