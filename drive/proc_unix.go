//go:build unix

package drive

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the driver in a process group of its own, so
// that a hung driver is killed with its children (a driver run through a
// shell script, say).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
