package main

import (
	"runtime/debug"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
)

// stamped is the version given at build time with
// -ldflags "-X main.stamped=v1.2.3" (packaging/npm/pack.sh does): it wins
// over the build information, which -buildvcs=false or a build outside a
// checkout leaves without a revision. The linker writes it; nothing else
// does.
var stamped string

// version is this binary's version: the stamped one, else the module
// version for `go install …@vX.Y.Z`, else the VCS revision of the checkout
// it was built from (with "-dirty" when it had changes), else "devel".
var version = cli.StampedOr(stamped, cli.BuildVersion(debug.ReadBuildInfo()))
