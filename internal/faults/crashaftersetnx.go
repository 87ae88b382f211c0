package faults

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/workloads"
)

// crash-after-setnx:role=R — the next client to acquire dies: naive
// between SETNX and EXPIRE (its lock keeps no TTL), the others right after
// acquiring (Env.CrashPoint); it never releases. With role= (--mix), the
// next client of that role: role=read crashes a reader while it holds
// the lock's read side.
func init() {
	Register("crash-after-setnx", Info{
		Desc: "a client dies between SETNX and EXPIRE (naive) or right after acquiring, never releasing",
		Params: []registry.Param{
			{Name: "role", Doc: "crash only a client of this role (--mix: " + strings.Join(workloads.Roles, ", ") + "); \"\" = any client",
				Default: "", Check: registry.OneOf(append([]string{""}, workloads.Roles...)...)},
		},
	}, func(v registry.Values) (Fault, error) { return crashAfterSetnx{role: v.String("role")}, nil })
}

// crashAfterSetnx is the crash-after-setnx fault: role is the role of the
// client it takes ("" any).
type crashAfterSetnx struct{ role string }

// Check refuses a role the scenario's clients do not play.
func (c crashAfterSetnx) Check(l Layout) []error {
	if c.role != "" && !slices.Contains(l.Roles, c.role) {
		return []error{fmt.Errorf("fault crash-after-setnx: role=%s, but no client plays it (give the clients roles with --mix, e.g. --mix %s=0.5,...)", c.role, c.role)}
	}
	return nil
}

// Act arms the crash; its window is the crash itself.
func (c crashAfterSetnx) Act(_ context.Context, a *Action) {
	a.Arm(&crashHook{a: a, role: c.role})
}

type crashHook struct {
	a     *Action
	role  string
	taken atomic.Bool
}

// Crash takes the first client at the scenario's crash point (of the
// role, with one).
func (h *crashHook) Crash(client int, point string) bool {
	if point != h.a.Env().CrashPoint {
		return false
	}
	if h.role != "" && (h.a.Env().Role == nil || h.a.Env().Role(client) != h.role) {
		return false
	}
	if !h.taken.CompareAndSwap(false, true) {
		return false
	}
	h.a.Disarm(h)
	h.a.Begin()
	note := "a client crashed at " + point
	if h.role != "" {
		note = "a client of role " + h.role + " crashed at " + point
	}
	h.a.End(note)
	return true
}
