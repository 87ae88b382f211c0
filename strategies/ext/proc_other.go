//go:build unix && !linux

package ext

import "syscall"

func parentDeath(*syscall.SysProcAttr) {}
