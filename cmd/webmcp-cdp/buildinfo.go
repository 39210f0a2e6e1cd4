package main

import "runtime/debug"

// version is this binary's version, read from its build information: the
// module version for `go install …@vX.Y.Z`, else the VCS revision of the
// checkout it was built from (with "-dirty" when it had changes), else
// "devel".
var version = buildVersion(debug.ReadBuildInfo())

// buildVersion words the version from build information (ok is false when
// the binary carries none).
func buildVersion(info *debug.BuildInfo, ok bool) string {
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
