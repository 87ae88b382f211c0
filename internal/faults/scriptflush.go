package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/topology"
)

// script-flush:node=I,every=D — SCRIPT FLUSH on server I once, or every D
// until the end when every > 0 (drivers fall back to EVAL on NOSCRIPT).
// Servers lockbench starts only: it would empty the script cache of the
// user's server.
func init() {
	Register("script-flush", Info{
		Desc:   "SCRIPT FLUSH on a server once, or every D until the end",
		Params: []registry.Param{NodeParam, Span("every", "repeat every D until the end; 0 = once", 0)},
		Needs:  NeedsOwnServer,
	}, func(v registry.Values) (Fault, error) {
		return scriptFlush{node: v.Int("node"), every: v.Duration("every")}, nil
	})
}

// scriptFlush is the script-flush fault's config.
type scriptFlush struct {
	node  int           // the server's index
	every time.Duration // the period; 0 = once
}

func (f scriptFlush) Check(l Layout) []error { return l.CheckServers("script-flush", f.node, 1) }

func (f scriptFlush) Act(ctx context.Context, a *Action) {
	a.Begin()
	a.End(f.flush(ctx, a))
}

func (f scriptFlush) flush(ctx context.Context, a *Action) string {
	s, err := a.Server(f.node)
	if err != nil {
		return err.Error()
	}
	n := 0
	for {
		if _, err := topology.Command(s.Addr, s.Password, adminTimeout, "SCRIPT", "FLUSH"); err != nil {
			return fmt.Sprintf("node %d (%s): SCRIPT FLUSH failed after %d: %v", f.node, s.Addr, n, err)
		}
		n++
		if f.every == 0 || Wait(ctx, f.every) {
			break
		}
	}
	if f.every == 0 {
		return fmt.Sprintf("node %d (%s): SCRIPT FLUSH", f.node, s.Addr)
	}
	return fmt.Sprintf("node %d (%s): SCRIPT FLUSH %d times, every %v", f.node, s.Addr, n, f.every)
}
