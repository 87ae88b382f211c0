//go:build unix

package ext

import (
	"os/exec"
	"syscall"
)

// setpgid starts the adapter in a process group of its own, so that a
// kill reaches the processes it started; on Linux the adapter is also
// killed when lockbench dies, even by SIGKILL (it would exit anyway when
// its stdin ends).
func setpgid(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	parentDeath(cmd.SysProcAttr)
}

func killGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
