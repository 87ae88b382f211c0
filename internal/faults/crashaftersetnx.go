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
		Desc:   "a client dies between SETNX and EXPIRE (naive) or right after acquiring, never releasing",
		Params: []registry.Param{roleParam("crash")},
	}, func(v registry.Values) (Fault, error) { return crashAfterSetnx{role: v.String("role")}, nil })
}

// crashAfterSetnx is the crash-after-setnx fault: role is the role of the
// client it takes ("" any).
type crashAfterSetnx struct{ role string }

// Check refuses a role the scenario's clients do not play.
func (c crashAfterSetnx) Check(l Layout) []error { return checkRole("crash-after-setnx", c.role, l) }

// roleParam is the role= parameter of a fault that takes one client:
// only a client of that role (--mix), "" any; verb says what it does.
func roleParam(verb string) registry.Param {
	return registry.Param{Name: "role", Doc: verb + " only a client of this role (--mix: " + strings.Join(workloads.Roles, ", ") + "); \"\" = any client",
		Default: "", Check: registry.OneOf(append([]string{""}, workloads.Roles...)...)}
}

// checkRole refuses fault's role when no client of the scenario plays it
// (Layout.Roles); nothing for "".
func checkRole(fault, role string, l Layout) []error {
	if role != "" && !slices.Contains(l.Roles, role) {
		if len(l.Roles) > 0 {
			return []error{fmt.Errorf("fault %s: role=%s, but no client plays it (--mix gives the roles %s)", fault, role, strings.Join(l.Roles, ", "))}
		}
		return []error{fmt.Errorf("fault %s: role=%s, but no client plays it: the clients have no roles (give them roles with --mix, e.g. --mix %s=0.5,...)", fault, role, role)}
	}
	return nil
}

// hasRole reports whether client plays role ("" : any client does).
func hasRole(a *Action, client int, role string) bool {
	return role == "" || a.Env().Role != nil && a.Env().Role(client) == role
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
	if !hasRole(h.a, client, h.role) || !h.taken.CompareAndSwap(false, true) {
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
