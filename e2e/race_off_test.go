//go:build !race

package e2e

// raceBuild says whether the tests are built with -race (see
// race_on_test.go).
const raceBuild = false
