package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hintsSite serves /where/: a page whose tool says what the page sees of
// the person: navigator.language, Intl's locale and time zone, and the
// position getCurrentPosition gives (or why it gave none, within 3 s).
func hintsSite(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/where/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>where</title><script>
navigator.modelContext.registerTool({name: 'where', description: 'What this page sees of the person: language, time zone, position.',
  inputSchema: {type: 'object', properties: {}},
  execute: async () => {
    const pos = await new Promise((resolve) => {
      const late = setTimeout(() => resolve({error: 'no answer within 3 s'}), 3000);
      navigator.geolocation.getCurrentPosition(
        (p) => { clearTimeout(late); resolve({lat: p.coords.latitude, lon: p.coords.longitude}); },
        (e) => { clearTimeout(late); resolve({error: e.message || String(e.code)}); });
    });
    return JSON.stringify({lang: navigator.language, intl: Intl.DateTimeFormat().resolvedOptions().locale,
      tz: Intl.DateTimeFormat().resolvedOptions().timeZone, pos});
  }});
</script>`)
	})
	return serveHandler(t, mux)
}

// seen is what the hints page reports.
type seen struct {
	Lang, Intl, TZ string
	Pos            struct {
		Lat, Lon *float64
		Error    string
	}
}

// TestClientHints: with --client-hints, a call whose _meta carries
// openai/locale and openai/userLocation shows the page fr-FR, Asia/Tokyo
// and Tokyo's position; the next call without them sees the browser's own
// language and time zone and no position (the permission was only for the
// call); without the flag the hints change nothing. Both backends.
func TestClientHints(t *testing.T) {
	t.Parallel()
	site := hintsSite(t)
	tokyo := mcp.Meta{"openai/locale": "fr-FR", "openai/userLocation": map[string]any{
		"city": "Tokyo", "country": "JP", "timezone": "Asia/Tokyo", "latitude": 35.6762, "longitude": 139.6503}}
	for _, backend := range []string{"polyfill", "native"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			c := start(t, "launch", "--headless", "--backend", backend, "--client-hints", site+"/where/")
			where := toolWithSuffix(c.waitFor("the where tool", hasSuffix("where", 1)), "where")[0]
			plain := c.seen(where, nil)
			if plain.Lang == "fr-FR" || plain.TZ == "Asia/Tokyo" || plain.Pos.Lat != nil {
				t.Fatalf("before any hints the page sees %+v", plain)
			}
			got := c.seen(where, tokyo)
			if got.Lang != "fr-FR" || got.Intl != "fr-FR" || got.TZ != "Asia/Tokyo" || got.Pos.Lat == nil || *got.Pos.Lat != 35.6762 || *got.Pos.Lon != 139.6503 {
				t.Errorf("with Tokyo's hints the page sees %+v (position error %q)", got, got.Pos.Error)
			}
			again := c.seen(where, tokyo) // the same hints: nothing to change
			if again.Lang != "fr-FR" || again.TZ != "Asia/Tokyo" || again.Pos.Lat == nil {
				t.Errorf("with the same hints again the page sees %+v", again)
			}
			t.Logf("without hints: %s %s %s, position: %q; with Tokyo's: %s %s %s %v,%v", plain.Lang, plain.Intl, plain.TZ, plain.Pos.Error, got.Lang, got.Intl, got.TZ, deref(got.Pos.Lat), deref(got.Pos.Lon))
			after := c.seen(where, nil)
			if after.Lang != plain.Lang || after.TZ != plain.TZ || after.Pos.Lat != nil {
				t.Errorf("the call after, without hints, sees %+v, want the browser's own %+v and no position", after, plain)
			}
		})
	}
	t.Run("without the flag", func(t *testing.T) {
		t.Parallel()
		c := start(t, "launch", "--headless", site+"/where/")
		where := toolWithSuffix(c.waitFor("the where tool", hasSuffix("where", 1)), "where")[0]
		if got := c.seen(where, tokyo); got.Lang == "fr-FR" || got.TZ == "Asia/Tokyo" || got.Pos.Lat != nil {
			t.Errorf("without --client-hints the page sees %+v", got)
		}
	})
}

// seen calls the hints page's tool with meta as the call's _meta.
func (c *client) seen(name string, meta mcp.Meta) seen {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}, Meta: meta})
	if err != nil || res.IsError {
		c.t.Fatalf("calling %s: %v %v", name, err, res)
	}
	var s seen
	if err := json.Unmarshal([]byte(text(res)), &s); err != nil {
		c.t.Fatalf("%s said %q: %v", name, text(res), err)
	}
	return s
}

// deref is *f, or NaN for nil.
func deref(f *float64) float64 {
	if f == nil {
		return math.NaN()
	}
	return *f
}
