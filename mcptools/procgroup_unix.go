//go:build unix

package mcptools

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the server as the leader of a new process group, so that shutdown can kill whatever it
// spawned (npx → sh → node chains) and a terminal's Ctrl-C does not reach it before we close it in order.
func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// killProcessGroup kills every process of the group led by pid. Errors are ignored: the group is usually gone.
func killProcessGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
