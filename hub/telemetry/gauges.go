package telemetry

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// browserStates are the values of the browsers gauge's state label.
var browserStates = [...]string{"up", "connecting", "stopped"}

// gaugeCollector reports the gauges read at scrape time: tools by state,
// tabs, browsers by state and MCP sessions. Nothing on the call path feeds
// them.
type gaugeCollector struct {
	tools, tabs, browsers, sessions, spaces *prometheus.Desc

	mu sync.Mutex
	g  Gauges
}

func (c *gaugeCollector) init() {
	c.tools = prometheus.NewDesc("webmcp_cdp_tools", "Routed page tools, by state: live (an open page has it) or cached (listed from the cache).", []string{"state"}, nil)
	c.tabs = prometheus.NewDesc("webmcp_cdp_tabs", "Tabs the hub knows.", nil, nil)
	c.browsers = prometheus.NewDesc("webmcp_cdp_browsers", "Browsers served, by state: up, connecting or stopped.", []string{"state"}, nil)
	c.sessions = prometheus.NewDesc("webmcp_cdp_mcp_sessions", "Open MCP sessions (stdio, and HTTP clients before 2026-07-28).", nil, nil)
	c.spaces = prometheus.NewDesc("webmcp_cdp_spaces", "People's spaces open (--isolate user): each a browser context or a pool browser of its own.", nil, nil)
}

func (c *gaugeCollector) set(g Gauges) {
	c.mu.Lock()
	c.g = g
	c.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (c *gaugeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.tools
	ch <- c.tabs
	ch <- c.browsers
	ch <- c.sessions
	ch <- c.spaces
}

// Collect implements prometheus.Collector.
func (c *gaugeCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	g := c.g
	c.mu.Unlock()
	if g.Counts != nil {
		n := g.Counts()
		ch <- prometheus.MustNewConstMetric(c.tools, prometheus.GaugeValue, float64(n.LiveTools), "live")
		ch <- prometheus.MustNewConstMetric(c.tools, prometheus.GaugeValue, float64(n.CachedTools), "cached")
		ch <- prometheus.MustNewConstMetric(c.tabs, prometheus.GaugeValue, float64(n.Tabs))
	}
	if g.Browsers != nil {
		states := g.Browsers()
		for _, s := range browserStates {
			ch <- prometheus.MustNewConstMetric(c.browsers, prometheus.GaugeValue, float64(states[s]), s)
		}
	}
	if g.Sessions != nil {
		ch <- prometheus.MustNewConstMetric(c.sessions, prometheus.GaugeValue, float64(g.Sessions()))
	}
	if g.Spaces != nil {
		ch <- prometheus.MustNewConstMetric(c.spaces, prometheus.GaugeValue, float64(g.Spaces()))
	}
}
