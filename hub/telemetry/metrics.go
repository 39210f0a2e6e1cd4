package telemetry

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Label values that stand for many.
const (
	// SiteOther is the site label of every site past the cap.
	SiteOther = "other"
	// SiteNone is the site label of a call that reached no page (an
	// unknown tool).
	SiteNone = "none"
	// ReasonOther is the reason label of a refusal reason the hub does not
	// list (none today).
	ReasonOther = "other"
)

// DefaultMaxSites is how many sites get a label of their own by default.
const DefaultMaxSites = 50

// callResults are the values of the result label, a fixed set.
var callResults = [...]hub.CallResult{hub.ResultOK, hub.ResultError, hub.ResultTimeout, hub.ResultRefused, hub.ResultCancelled}

// refusalReasons are the values of the reason label but ReasonOther.
var refusalReasons = [...]core.Reason{core.ReasonName, core.ReasonDescription, core.ReasonSize, core.ReasonSchema, core.ReasonDuplicate,
	core.ReasonTooMany, core.ReasonRate, core.ReasonOrigin, core.ReasonPermissions, core.ReasonPage}

// durationBuckets are the buckets of the call duration, in seconds: 0.5 ms
// to 60 s.
var durationBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Gauges are read when Prometheus scrapes; each func may be nil (the gauge
// is then not reported).
type Gauges struct {
	// Counts returns the catalog's sizes (hub.Hub.Counts).
	Counts func() hub.Counts
	// Browsers returns how many browsers are in each state ("up",
	// "connecting", "stopped").
	Browsers func() map[string]int
	// Sessions returns the open MCP sessions (mcpserver.Server.Sessions).
	Sessions func() int
	// Spaces returns the people's spaces open (--isolate user), nil
	// without them.
	Spaces func() int
}

// Metrics are the Prometheus instruments, on a registry of their own.
type Metrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	refused  map[core.Reason]prometheus.Counter
	sites    sites
	gauges   gaugeCollector
}

// siteInstruments are one site's children of the call metrics, made once.
type siteInstruments struct {
	calls    [len(callResults)]prometheus.Counter
	duration prometheus.Observer
}

// NewMetrics makes the instruments and registers them, with the Go runtime
// and process collectors, on a new registry. maxSites caps the site label
// values (DefaultMaxSites when 0 or less).
func NewMetrics(maxSites int) *Metrics {
	if maxSites <= 0 {
		maxSites = DefaultMaxSites
	}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webmcp_cdp_tool_calls_total",
			Help: "Tool calls of page tools, by site (the page's origin; sites past the cap are \"other\") and result (ok, error, timeout, refused, cancelled).",
		}, []string{"site", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "webmcp_cdp_tool_call_duration_seconds",
			Help:    "Time from a tools/call reaching the hub to its result, by site.",
			Buckets: durationBuckets,
		}, []string{"site"}),
		refused: make(map[core.Reason]prometheus.Counter, len(refusalReasons)+1),
	}
	m.sites = sites{max: maxSites, m: map[string]*siteInstruments{}, make: m.siteInstruments}
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "webmcp_cdp_registrations_refused_total",
		Help: "Tool registrations the hub refused, by reason (the codes of the refusal log).",
	}, []string{"reason"})
	for _, r := range refusalReasons {
		m.refused[r] = refused.WithLabelValues(string(r))
	}
	m.refused[ReasonOther] = refused.WithLabelValues(ReasonOther)
	m.gauges.init()
	m.reg.MustRegister(m.calls, m.duration, refused, &m.gauges,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// SetGauges sets what the gauges read; call it before serving.
func (m *Metrics) SetGauges(g Gauges) { m.gauges.set(g) }

// Handler serves the metrics in Prometheus's text (or OpenMetrics) format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, MaxRequestsInFlight: 4})
}

// Registry is the registry the instruments are on (for tests and for
// serving them elsewhere).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// call counts a finished call.
func (m *Metrics) call(c *hub.CallTrace) {
	s := m.sites.get(c.Origin)
	for i, r := range callResults {
		if r == c.Result {
			s.calls[i].Inc()
			break
		}
	}
	s.duration.Observe(c.End.Sub(c.Start).Seconds())
}

// refusal counts a refused registration.
func (m *Metrics) refusal(r core.Reason) {
	c, ok := m.refused[r]
	if !ok {
		c = m.refused[ReasonOther]
	}
	c.Inc()
}

func (m *Metrics) siteInstruments(site string) *siteInstruments {
	s := &siteInstruments{duration: m.duration.WithLabelValues(site)}
	for i, r := range callResults {
		s.calls[i] = m.calls.WithLabelValues(site, string(r))
	}
	return s
}

// sites bounds the site label: the first max sites seen get a label of
// their own, every later one shares SiteOther, so a page that makes up
// origins cannot grow the series. Each site's instruments are made once, so
// counting a call takes a read lock and a map lookup, no allocation.
type sites struct {
	max  int
	make func(site string) *siteInstruments

	mu    sync.RWMutex
	m     map[string]*siteInstruments // by origin; SiteOther and SiteNone too
	other *siteInstruments
}

// get returns the instruments of origin's label.
func (s *sites) get(origin string) *siteInstruments {
	if origin == "" {
		origin = SiteNone
	}
	s.mu.RLock()
	i := s.m[origin]
	s.mu.RUnlock()
	if i != nil {
		return i
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.m[origin]; i != nil {
		return i
	}
	if len(s.m) >= s.max && origin != SiteNone {
		if s.other == nil {
			s.other = s.make(SiteOther)
		}
		return s.other
	}
	i = s.make(SiteLabel(origin))
	s.m[origin] = i
	return i
}

// maxSiteLabel bounds the length of a site label.
const maxSiteLabel = 200

// SiteLabel is the site label of an origin: the origin, cut to 200 bytes
// (a cut label ends in "…"; Prometheus takes any UTF-8).
func SiteLabel(origin string) string { return cut(origin, maxSiteLabel) }
