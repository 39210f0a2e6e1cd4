// Package e2e holds the end-to-end tests of webmcp-cdp: the real binary,
// a real Chromium and the go-sdk MCP client over real transports.
package e2e
