package cli

import "runtime/debug"

// StampedOr is the stamped version when there is one, else fallback.
func StampedOr(stamped, fallback string) string {
	if stamped != "" {
		return stamped
	}
	return fallback
}

// BuildVersion words the version from build information (ok is false when
// the binary carries none).
func BuildVersion(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += "-dirty"
	}
	return "devel-" + rev
}
