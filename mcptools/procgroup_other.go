//go:build !unix

package mcptools

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

func killProcessGroup(int) {}
