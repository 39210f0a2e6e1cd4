package mcpserver

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Cache hints of MCP 2026-07-28 (ttlMs and cacheScope), decided in
// docs/decisions/2026-11-28-cache-hints.md:
//   - server/discover names the versions, capabilities and instructions of
//     this process, which do not change while it runs: discoverTTL. It is
//     private: the extensions it names depend on the caller's own (MCP
//     Apps is named to a client that declares it, apps.go), so a shared
//     cache must not hand one caller's answer to another;
//   - the lists and resources/read reflect the pages open in a browser at
//     this moment, which change whenever a page registers or removes a
//     tool, with no advance notice: never fresh (ttlMs 0), so a client
//     lists again rather than trust a list a page may already have
//     changed (list_changed tells the clients that listen). They are
//     private: they come from a person's signed-in browser, and a shared
//     cache in front of an authenticated endpoint must not hand them to
//     other callers.

// discoverTTL is how long a client may keep server/discover's answer.
const discoverTTL = 5 * time.Minute

// cacheHints is the server's SetCacheable.
func cacheHints(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	if _, ok := req.GetParams().(*mcp.DiscoverParams); ok {
		c.TTLMs = int(discoverTTL / time.Millisecond)
		c.CacheScope = "private"
		return
	}
	c.TTLMs = 0
	c.CacheScope = "private"
}
