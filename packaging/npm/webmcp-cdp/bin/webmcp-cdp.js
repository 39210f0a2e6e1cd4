#!/usr/bin/env node
// The webmcp-cdp launcher: runs the webmcp-cdp binary of this platform,
// which npm installed as one of this package's optional dependencies
// (webmcp-cdp-<platform>-<arch>, chosen by their "os" and "cpu" fields),
// with this process's arguments, stdin, stdout and stderr. Nothing is
// downloaded: the binary is in the package.
'use strict';

const { spawn } = require('node:child_process');

const exe = process.platform === 'win32' ? 'webmcp-cdp.exe' : 'webmcp-cdp';
const pkg = `webmcp-cdp-${process.platform}-${process.arch}`;

/** binaryPath is the installed binary's path, or exits with what to do. */
function binaryPath() {
  if (process.env.WEBMCP_CDP_BINARY) {
    return process.env.WEBMCP_CDP_BINARY;
  }
  try {
    return require.resolve(`${pkg}/bin/${exe}`);
  } catch {
    const supported = require('../package.json').optionalDependencies || {};
    process.stderr.write(
      `webmcp-cdp: no binary for ${process.platform}-${process.arch}: the package ${pkg} is not installed.\n` +
        (pkg in supported
          ? 'npm installs it as an optional dependency, and skips it with --omit=optional or when it cannot fetch it: install again.\n'
          : `webmcp-cdp is published for ${Object.keys(supported).map((p) => p.replace('webmcp-cdp-', '')).join(', ')}.\n`) +
        'Or build it with Go: go install github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp@latest\n',
    );
    process.exit(1);
  }
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: 'inherit', windowsHide: true });
// A client stopping its server signals this process: pass it on, and let
// webmcp-cdp close its browser before this process exits.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(sig);
    }
  });
}
child.on('error', (err) => {
  process.stderr.write(`webmcp-cdp: could not run ${child.spawnfile}: ${err.message}\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
