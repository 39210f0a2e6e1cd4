package e2e

import "testing"

// TestGrid runs the tests that share the package's Selenium Grid one after
// another, as its subtests, in one of the package's parallel slots. They
// take the Grid in turn anyway (startGrid), and as six parallel tests they
// were paused until most others had run (their files sort late), then held
// several of the eight slots at once while they waited for their turn: the
// chain, the package's longest (six minutes beside stress-ng), started
// minutes late and ended the package. This file sorts first, so the chain
// starts at once and holds one slot.
func TestGrid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"Launch", testGridLaunch},         // grid_test.go
		{"KeptAlive", testGridKeptAlive},   // grid_test.go
		{"Leftovers", testGridLeftovers},   // grid_test.go
		{"SaysNo", testGridSaysNo},         // grid_test.go
		{"Recipes", testGridRecipes},       // recipes_test.go
		{"SpacesOnGrid", testSpacesOnGrid}, // spaces_grid_test.go
	} {
		t.Run(tc.name, tc.run)
	}
}
