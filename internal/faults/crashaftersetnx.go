package faults

import (
	"context"
	"sync/atomic"

	"github.com/lockbench/lockbench/internal/registry"
)

// crash-after-setnx — the next client to acquire dies: naive between
// SETNX and EXPIRE (its lock keeps no TTL), the others right after
// acquiring (Env.CrashPoint); it never releases.
func init() {
	Register("crash-after-setnx", Info{
		Desc: "a client dies between SETNX and EXPIRE (naive) or right after acquiring, never releasing",
	}, func(registry.Values) (Fault, error) { return crashAfterSetnx{}, nil })
}

// crashAfterSetnx is the crash-after-setnx fault: it has no parameter.
type crashAfterSetnx struct{}

func (crashAfterSetnx) Check(Layout) []error { return nil }

// Act arms the crash; its window is the crash itself.
func (crashAfterSetnx) Act(_ context.Context, a *Action) { a.Arm(&crashHook{a: a}) }

type crashHook struct {
	a     *Action
	taken atomic.Bool
}

// Crash takes the first client at the scenario's crash point.
func (h *crashHook) Crash(point string) bool {
	if point != h.a.Env().CrashPoint || !h.taken.CompareAndSwap(false, true) {
		return false
	}
	h.a.Disarm(h)
	h.a.Begin()
	h.a.End("a client crashed at " + point)
	return true
}
