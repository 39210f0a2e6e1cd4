package hub

import "github.com/webmcp-cdp/webmcp-cdp/internal/core"

// maxRefusals is how many refusals the hub keeps; older ones are dropped.
const maxRefusals = 512

// refusalLog keeps the last refusals in the order they were made. It is
// guarded by Hub.mu.
type refusalLog struct {
	recs  []core.Refusal
	total uint64 // refusals ever added
}

func (l *refusalLog) add(r core.Refusal) {
	if len(l.recs) == maxRefusals {
		l.recs = append(l.recs[:0], l.recs[1:]...)
	}
	l.recs = append(l.recs, r)
	l.total++
}

// since returns the refusals after the first n ever made (as many of them
// as are still kept) and the count of refusals so far.
func (l *refusalLog) since(n uint64) ([]core.Refusal, uint64) {
	if n >= l.total {
		return nil, l.total
	}
	skip := len(l.recs) - int(min(l.total-n, uint64(len(l.recs))))
	return append([]core.Refusal(nil), l.recs[skip:]...), l.total
}

// Refusals returns the refusals made after the first n (0 for all that are
// still kept, the last 512) and the number made so far, to pass as n next
// time. Every refusal of a tool, by the browser or by admission, is here:
// the status page, CI mode and the log read the same records.
func (h *Hub) Refusals(n uint64) ([]core.Refusal, uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.refusals.since(n)
}
