package browsers

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// gridStatus is what GET /status tells of the nodes.
type gridStatus struct {
	Ready   bool   `json:"ready"`
	Message string `json:"message"`
	Nodes   []struct {
		URI            string `json:"uri"`
		Availability   string `json:"availability"`
		SessionTimeout int64  `json:"sessionTimeout"` // ms
		Slots          []struct {
			Session *struct {
				SessionID    string                     `json:"sessionId"`
				Start        string                     `json:"start"`
				Capabilities map[string]json.RawMessage `json:"capabilities"`
			} `json:"session"`
		} `json:"slots"`
	} `json:"nodes"`
}

func (g *Grid) status(ctx context.Context) (*gridStatus, error) {
	var st gridStatus
	if _, err := g.do(ctx, "GET", "/status", nil, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// keepAlivePeriod is KeepAlive, or a third of the shortest session timeout
// of the Grid's nodes (read once), between 1 s and 60 s.
func (g *Grid) keepAlivePeriod(ctx context.Context) (time.Duration, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.opts.KeepAlive > 0 {
		return g.opts.KeepAlive, nil
	}
	if g.keepAlive > 0 {
		return g.keepAlive, nil
	}
	st, err := g.status(ctx)
	if err != nil {
		return defaultKeepAlive, err
	}
	var shortest int64
	for _, n := range st.Nodes {
		if n.SessionTimeout > 0 && (shortest == 0 || n.SessionTimeout < shortest) {
			shortest = n.SessionTimeout
		}
	}
	g.keepAlive = defaultKeepAlive
	if shortest > 0 {
		g.keepAlive = min(max(time.Duration(shortest)*time.Millisecond/3, minKeepAlive), defaultKeepAlive)
	}
	return g.keepAlive, nil
}

// Leftover is a session on the Grid tagged by a webmcp-cdp process.
type Leftover struct {
	ID   string
	Node string
	Tag  Tag
}

func (l Leftover) String() string {
	return fmt.Sprintf("%s on %s (pid %d on %s, started %s)", l.ID, l.Node, l.Tag.PID, l.Tag.Host, l.Tag.Started.Format(time.RFC3339))
}

// Leftovers lists the sessions on the Grid that a webmcp-cdp process
// tagged, other than this one's: left behind by one that did not end
// cleanly (kill -9), or held by another that runs.
func (g *Grid) Leftovers(ctx context.Context) ([]Leftover, error) {
	st, err := g.status(ctx)
	if err != nil {
		return nil, err
	}
	var out []Leftover
	for _, n := range st.Nodes {
		for _, sl := range n.Slots {
			if sl.Session == nil {
				continue
			}
			raw, ok := sl.Session.Capabilities[TagCapability]
			if !ok {
				continue
			}
			var tag Tag
			if json.Unmarshal(raw, &tag) != nil || tag.same(g.opts.Tag) {
				continue
			}
			out = append(out, Leftover{ID: sl.Session.SessionID, Node: n.URI, Tag: tag})
		}
	}
	return out, nil
}

// nodeOf is the URI of the node that runs session id, or "".
func (g *Grid) nodeOf(ctx context.Context, id string) string {
	st, err := g.status(ctx)
	if err != nil {
		return ""
	}
	for _, n := range st.Nodes {
		for _, sl := range n.Slots {
			if sl.Session != nil && sl.Session.SessionID == id {
				return n.URI
			}
		}
	}
	return ""
}

// same reports whether two tags name one process.
func (t Tag) same(o Tag) bool {
	return t.Host == o.Host && t.PID == o.PID && t.Started.Equal(o.Started)
}
