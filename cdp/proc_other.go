//go:build !linux

package cdp

import "os/exec"

// setProcessGroup is a no-op where process groups are not supported here.
func setProcessGroup(cmd *exec.Cmd) {}

// killGroup kills the browser process.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
