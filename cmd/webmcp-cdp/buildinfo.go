package main

import "runtime/debug"

// stamped is the version given at build time with
// -ldflags "-X main.stamped=v1.2.3" (packaging/npm/pack.sh does): it wins
// over the build information, which -buildvcs=false or a build outside a
// checkout leaves without a revision. The linker writes it; nothing else
// does.
var stamped string

// version is this binary's version: the stamped one, else the module
// version for `go install …@vX.Y.Z`, else the VCS revision of the checkout
// it was built from (with "-dirty" when it had changes), else "devel".
var version = stampedOr(stamped, buildVersion(debug.ReadBuildInfo()))

// stampedOr is the stamped version when there is one, else fallback.
func stampedOr(stamped, fallback string) string {
	if stamped != "" {
		return stamped
	}
	return fallback
}

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
