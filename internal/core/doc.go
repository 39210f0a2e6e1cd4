// Package core holds the plain values that cross from a browser into the
// hub and back: a tool as a page declared it, the document it came from
// (Source), what a call into the page returned (Result), what the hub hands
// a client (Outcome, with content blocks), a routed tool's Provenance, a
// tool the hub would not admit (Refusal, with a reason code), and the page
// dialogs a call may meet.
//
// It is a leaf: it imports only the standard library, so that package cdp
// (which speaks CDP) and package hub (which names and routes tools) share
// these types without either importing the other, and neither links the
// MCP SDK. MCP's own types appear only at the MCP edge (hub/mcpserver and
// the relay's wire), which converts to and from these.
package core
