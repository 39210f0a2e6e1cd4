package textdist

import "testing"

func TestEdit(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"kitten", "sitting", 3}, {"add_note", "add_notes", 1}, {"same", "same", 0},
	} {
		if got := Edit(tc.a, tc.b); got != tc.want {
			t.Errorf("Edit(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
