claude mcp add webmcp -- webmcp-cdp launch http://localhost:3000/
