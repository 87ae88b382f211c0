package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
)

// node-restart:node=I,down=D — kill server I (default 0) and start it
// again after D (default 0) on the same port, without persistence: it
// forgets every key.
func init() {
	Register("node-restart", Info{
		Desc:   "kill a server and restart it empty on the same port",
		Params: []registry.Param{NodeParam, Span("down", "downtime before the restart", 0)},
		Needs:  NeedsOwnServer,
	}, func(v registry.Values) (Fault, error) {
		return nodeRestart{node: v.Int("node"), down: v.Duration("down")}, nil
	})
}

// nodeRestart is the node-restart fault's config.
type nodeRestart struct {
	node int           // the server's index
	down time.Duration // between the kill and the start
}

func (r nodeRestart) Check(l Layout) []error { return l.CheckServers("node-restart", r.node, 1) }

func (r nodeRestart) Act(ctx context.Context, a *Action) {
	a.Begin()
	s, err := a.Server(r.node)
	if err != nil {
		a.End(err.Error())
		return
	}
	if err := s.Restart(ctx, r.down); err != nil {
		a.End("restart failed: " + err.Error())
		return
	}
	a.End(fmt.Sprintf("node %d (%s) restarted empty", r.node, s.Addr))
}
