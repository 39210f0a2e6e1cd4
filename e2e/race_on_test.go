//go:build race

package e2e

// raceBuild says whether the tests are built with -race: then TestMain
// builds the binary under test with -race too, so that the e2e suite finds
// data races in webmcp-cdp itself, on real pages and real clients.
const raceBuild = true
