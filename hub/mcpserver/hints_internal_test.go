package mcpserver

import (
	"log/slog"
	"math"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// TestParseHints: the hints a call's _meta carries, what is left out, and
// the locale sent at initialize.
func TestParseHints(t *testing.T) {
	tokyo := map[string]any{"timezone": "Asia/Tokyo", "latitude": 35.6762, "longitude": 139.6503, "city": "Tokyo"}
	tests := []struct {
		name       string
		meta, init map[string]any
		want       core.Hints
	}{
		{"none", nil, nil, core.Hints{}},
		{"all", map[string]any{"openai/locale": "fr-FR", "openai/userLocation": tokyo}, nil,
			core.Hints{Locale: "fr-FR", Timezone: "Asia/Tokyo", Geo: true, Latitude: 35.6762, Longitude: 139.6503}},
		{"the locale of initialize", nil, map[string]any{"openai/locale": "ja-JP"}, core.Hints{Locale: "ja-JP"}},
		{"the call's locale first", map[string]any{"openai/locale": "de"}, map[string]any{"openai/locale": "ja-JP"}, core.Hints{Locale: "de"}},
		{"not a language tag", map[string]any{"openai/locale": "fr FR; drop"}, nil, core.Hints{}},
		{"a locale too long", map[string]any{"openai/locale": "en-abcdefgh-abcdefgh-abcdefgh-abcdefgh"}, nil, core.Hints{}},
		{"not a time zone", map[string]any{"openai/userLocation": map[string]any{"timezone": "../../etc/passwd"}}, nil, core.Hints{}},
		{"a latitude out of range", map[string]any{"openai/userLocation": map[string]any{"latitude": 91.0, "longitude": 0.0}}, nil, core.Hints{}},
		{"a latitude alone", map[string]any{"openai/userLocation": map[string]any{"latitude": 10.0}}, nil, core.Hints{}},
		{"not a number", map[string]any{"openai/userLocation": map[string]any{"latitude": "35", "longitude": 139.0}}, nil, core.Hints{}},
		{"NaN", map[string]any{"openai/userLocation": map[string]any{"latitude": math.NaN(), "longitude": 1.0}}, nil, core.Hints{}},
		{"the equator at Greenwich", map[string]any{"openai/userLocation": map[string]any{"latitude": 0.0, "longitude": 0.0}}, nil, core.Hints{Geo: true}},
		{"not an object", map[string]any{"openai/userLocation": "Tokyo"}, nil, core.Hints{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseHints(tt.meta, tt.init, slog.New(slog.DiscardHandler)); got != tt.want {
				t.Errorf("parseHints = %+v, want %+v", got, tt.want)
			}
		})
	}
}
