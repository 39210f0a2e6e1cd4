package cli

import (
	"runtime/debug"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	setting := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, "devel"},
		{"go install of a tag", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}}, true, "v0.3.1"},
		{"a clean checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: setting("vcs.revision", "4e21386aa0b1c2d3e4f5", "vcs.modified", "false")}, true, "devel-4e21386aa0b1"},
		{"a checkout with changes", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: setting("vcs.revision", "4e21386", "vcs.modified", "true")}, true, "devel-4e21386-dirty"},
		{"no VCS information", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "devel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := BuildVersion(tc.info, tc.ok); got != tc.want {
				t.Errorf("buildVersion = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStampedOr(t *testing.T) {
	for _, tc := range []struct{ stamped, fallback, want string }{
		{"v1.2.3", "devel-4e21386aa0b1", "v1.2.3"},
		{"v1.2.3", "devel", "v1.2.3"},
		{"", "devel-4e21386aa0b1", "devel-4e21386aa0b1"},
	} {
		if got := StampedOr(tc.stamped, tc.fallback); got != tc.want {
			t.Errorf("StampedOr(%q, %q) = %q, want %q", tc.stamped, tc.fallback, got, tc.want)
		}
	}
}
