package mcpserver

import (
	"context"
	"log/slog"
	"math"
	"regexp"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Client hints (seed 004): a call's _meta may carry the person's language
// (openai/locale, also sent at initialize) and place (openai/userLocation:
// city, region, country, timezone, latitude, longitude). With
// Options.ClientHints the page is shown them during the call (hub/hints.go).
// They are advisory: a hint that does not parse is left out, never an
// error, and grants nothing beyond the position the client already sent.

// Keys of the hints in _meta.
const (
	metaLocale       = "openai/locale"
	metaUserLocation = "openai/userLocation"
)

var (
	// localeRE is a BCP 47 language tag's shape (at most 35 characters,
	// checked apart).
	localeRE = regexp.MustCompile(`^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$`)
	// timezoneRE is an IANA time zone name's shape, such as Asia/Tokyo or
	// America/Argentina/Buenos_Aires (at most 64 characters).
	timezoneRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+){0,3}$`)
)

// hintContext returns ctx with the hints of req for the page, when
// Options.ClientHints is on; else ctx as is. A call with no hints gets the
// zero Hints: the tab shows the browser's own language and place.
func (s *Server) hintContext(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if !s.opts.ClientHints {
		return ctx
	}
	var meta, initMeta map[string]any
	if req != nil && req.Params != nil {
		meta = req.Params.Meta
	}
	if req != nil && req.Session != nil {
		if ip := req.Session.InitializeParams(); ip != nil {
			initMeta = ip.Meta
		}
	}
	return hub.WithHints(ctx, parseHints(meta, initMeta, s.logger))
}

// parseHints reads the hints of a call's _meta, the locale falling back on
// the one sent at initialize. What does not parse is left out.
func parseHints(meta, initMeta map[string]any, logger *slog.Logger) core.Hints {
	var h core.Hints
	locale, ok := meta[metaLocale].(string)
	if !ok {
		locale, _ = initMeta[metaLocale].(string)
	}
	if locale != "" && len(locale) <= 35 && localeRE.MatchString(locale) {
		h.Locale = locale
	} else if locale != "" {
		logger.Debug("a client's openai/locale is not a language tag; left out", "locale", clip(locale, 40))
	}
	loc, _ := meta[metaUserLocation].(map[string]any)
	if tz, _ := loc["timezone"].(string); tz != "" {
		if len(tz) <= 64 && timezoneRE.MatchString(tz) {
			h.Timezone = tz
		} else {
			logger.Debug("a client's openai/userLocation.timezone is not a time zone name; left out", "timezone", clip(tz, 70))
		}
	}
	lat, latOK := loc["latitude"].(float64)
	lon, lonOK := loc["longitude"].(float64)
	if latOK && lonOK && !math.IsNaN(lat) && !math.IsNaN(lon) && math.Abs(lat) <= 90 && math.Abs(lon) <= 180 {
		h.Geo, h.Latitude, h.Longitude = true, lat, lon
	} else if latOK || lonOK {
		logger.Debug("a client's openai/userLocation has no usable latitude and longitude; the position is left out")
	}
	return h
}

// clip cuts s to at most n bytes, for a log line.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
