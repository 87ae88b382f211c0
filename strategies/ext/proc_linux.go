package ext

import "syscall"

func parentDeath(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
