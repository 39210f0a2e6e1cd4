package mcpserver

import (
	"html/template"
	"net/http"
	"slices"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

var statusTemplate = template.Must(template.New("status").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="2">
<title>webmcp-cdp</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;background:#14161a;color:#e3e6eb}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{padding:.2rem .6rem;border-bottom:1px solid #333;text-align:left;vertical-align:top}
code{font-family:ui-monospace,monospace}.err{color:#f88}.ok{color:#8f8}.muted{color:#8b93a1}</style></head>
<body><h1>webmcp-cdp {{.Version}}</h1>
<h2>Tabs</h2>
<table><tr><th>tab</th><th>URL</th><th>title</th><th>tools</th></tr>
{{range .Tabs}}<tr><td>{{.N}}{{if .Active}} (active){{end}}</td><td><code>{{.URL}}</code></td><td>{{.Title}}</td><td>{{range .Tools}}<code>{{.}}</code><br>{{else}}<span class="muted">none</span>{{end}}</td></tr>
{{else}}<tr><td colspan="4" class="muted">no tabs</td></tr>{{end}}</table>
<h2>Last calls</h2>
<table><tr><th>when</th><th>tool</th><th>tab</th><th>took</th><th>result</th></tr>
{{range .Calls}}<tr><td>{{.At.Format "15:04:05.000"}}</td><td><code>{{.Tool}}</code></td><td>{{.Tab}}</td><td>{{.Took}}</td><td>{{if .OK}}<span class="ok">ok</span>{{else}}<span class="err">error</span> {{.Error}}{{end}}</td></tr>
{{else}}<tr><td colspan="5" class="muted">no calls yet</td></tr>{{end}}</table>
<h2>Refused tools</h2>
{{if gt .RefusedTotal (len .Refusals)}}<p class="muted">the last {{len .Refusals}} of {{.RefusedTotal}}</p>{{end}}
<table><tr><th>when</th><th>reason</th><th>tool</th><th>origin</th><th>detail</th></tr>
{{range .Refusals}}<tr><td>{{.At.Format "15:04:05.000"}}</td><td><code>{{.Reason}}</code></td><td>{{if eq .Tool "*"}}<span class="muted">several</span>{{else}}<code>{{.Tool}}</code>{{end}}</td><td><code>{{.Origin}}</code></td><td>{{.Detail}}</td></tr>
{{else}}<tr><td colspan="5" class="muted">none</td></tr>{{end}}</table>
</body></html>`))

// statusRefusals is how many refusals the status page shows.
const statusRefusals = 50

// recentRefusals returns the hub's last n refusals, newest first, and the
// number of refusals made so far. They come from the hub's refusal log,
// the record CI mode and the log read too.
func (s *Server) recentRefusals(n int) ([]core.Refusal, uint64) {
	recs, total := s.hub.Refusals(0)
	recs = recs[max(len(recs)-n, 0):]
	slices.Reverse(recs)
	return recs, total
}

func (s *Server) statusPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	refusals, total := s.recentRefusals(statusRefusals)
	if err := statusTemplate.Execute(w, map[string]any{
		"Version":      s.opts.Version,
		"Tabs":         s.hub.Tabs(),
		"Calls":        s.calls.list(),
		"Refusals":     refusals,
		"RefusedTotal": int(total),
	}); err != nil {
		s.logger.Debug("writing the status page", "err", err)
	}
}
