claude mcp add webmcp -- npx -y webmcp-cdp launch http://localhost:3000/
