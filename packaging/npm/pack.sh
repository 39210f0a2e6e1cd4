#!/usr/bin/env bash
# pack.sh OUTDIR: builds the npm packages of webmcp-cdp from this checkout
# into OUTDIR as tarballs (npm pack): the launcher `webmcp-cdp` and one
# package per platform, `webmcp-cdp-<os>-<cpu>`, carrying the binary.
#
# The version is $VERSION (a leading "v" is dropped for npm), else the tag
# of HEAD, else 0.0.0-dev.g<commit>. The binary is stamped with it through
# -ldflags -X main.stamped=v<version>, so `--version` is right whatever
# -buildvcs says.
#
# PLATFORMS (space-separated, as <os>-<cpu> in Node's words) limits the
# platform packages built; "host" is this machine's. Default: all six.
# Needs Go, Node and npm.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: bash packaging/npm/pack.sh OUTDIR" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)

version=${VERSION:-}
if [ -z "$version" ]; then
  version=$(git -C "$root" describe --tags --exact-match HEAD 2>/dev/null || true)
fi
if [ -z "$version" ]; then
  version="0.0.0-dev.g$(git -C "$root" rev-parse --short=12 HEAD)"
fi
version=${version#v}
if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$ ]]; then
  echo "pack.sh: version $version is not semver (MAJOR.MINOR.PATCH[-PRE]): set VERSION" >&2
  exit 2
fi

all="linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64"
platforms=${PLATFORMS:-$all}
if [ "$platforms" = host ]; then
  platforms="$(node -p 'process.platform + "-" + process.arch')"
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

for p in $platforms; do
  os=${p%-*} cpu=${p#*-}
  case $os in
    linux | darwin) goos=$os exe=webmcp-cdp ;;
    win32) goos=windows exe=webmcp-cdp.exe ;;
    *) echo "pack.sh: unknown platform $p (want one of: $all)" >&2; exit 2 ;;
  esac
  case $cpu in
    x64) goarch=amd64 ;;
    arm64) goarch=arm64 ;;
    *) echo "pack.sh: unknown platform $p (want one of: $all)" >&2; exit 2 ;;
  esac
  dir="$stage/webmcp-cdp-$p"
  mkdir -p "$dir/bin"
  echo "building webmcp-cdp v$version for $p" >&2
  (cd "$root" && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=false \
    -ldflags "-s -w -X main.stamped=v$version" -o "$dir/bin/$exe" ./cmd/webmcp-cdp)
  cp "$root/LICENSE" "$dir/"
  PKG_NAME="webmcp-cdp-$p" PKG_VERSION=$version PKG_OS=$os PKG_CPU=$cpu PKG_EXE=$exe node -e '
    const e = process.env;
    const pkg = {
      name: e.PKG_NAME,
      version: e.PKG_VERSION,
      description: `The webmcp-cdp binary for ${e.PKG_OS}-${e.PKG_CPU} (installed by the webmcp-cdp package)`,
      license: "MIT",
      repository: { type: "git", url: "git+https://github.com/webmcp-cdp/webmcp-cdp.git" },
      os: [e.PKG_OS],
      cpu: [e.PKG_CPU],
      files: [`bin/${e.PKG_EXE}`],
      preferUnplugged: true,
    };
    require("fs").writeFileSync(process.argv[1], JSON.stringify(pkg, null, 2) + "\n");
  ' "$dir/package.json"
  (cd "$dir" && npm pack --silent --pack-destination "$out" >/dev/null)
done

# The launcher: every platform package an optional dependency of exactly
# this version, whichever were built here; and the manual pages (`npm i -g`
# puts them where man looks), written by this machine's build, dated by the
# commit so the tarball does not change from one run to the next. Built
# as the platform binaries are (no cgo, -trimpath), so its packages come
# from the build cache.
dir="$stage/webmcp-cdp"
cp -R "$here/webmcp-cdp" "$dir"
cp "$root/LICENSE" "$dir/"
echo "writing the manual pages" >&2
(cd "$root" && SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)} CGO_ENABLED=0 \
  go run -trimpath -buildvcs=false -ldflags "-X main.stamped=v$version" ./cmd/webmcp-cdp man "$dir/man")
PKG_VERSION=$version PKG_PLATFORMS=$all node -e '
  const fs = require("fs");
  const file = process.argv[1];
  const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
  pkg.version = process.env.PKG_VERSION;
  const pages = fs.readdirSync(require("path").join(file, "..", "man")).filter((f) => f.endsWith(".1")).sort();
  pkg.man = pages.map((f) => `man/${f}`);
  pkg.files.push(...pkg.man);
  pkg.optionalDependencies = {};
  for (const p of process.env.PKG_PLATFORMS.split(" ")) {
    pkg.optionalDependencies[`webmcp-cdp-${p}`] = process.env.PKG_VERSION;
  }
  fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
' "$dir/package.json"
(cd "$dir" && npm pack --silent --pack-destination "$out" >/dev/null)
ls "$out"/*.tgz
