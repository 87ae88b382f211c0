package faults

import (
	"context"
	"fmt"

	"github.com/lockbench/lockbench/internal/registry"
)

// node-kill:node=I — SIGKILL server I (default 0); it stays down.
func init() {
	Register("node-kill", Info{
		Desc:   "SIGKILL a server; it stays down",
		Params: []registry.Param{NodeParam},
		Needs:  NeedsOwnServer,
	}, func(v registry.Values) (Fault, error) { return nodeKill{node: v.Int("node")}, nil })
}

// nodeKill is the node-kill fault's config.
type nodeKill struct {
	node int // the server's index
}

func (k nodeKill) Check(l Layout) []error { return l.CheckServers("node-kill", k.node, 1) }

func (k nodeKill) Act(_ context.Context, a *Action) {
	a.Begin()
	s, err := a.Server(k.node)
	if err != nil {
		a.End(err.Error())
		return
	}
	s.Kill()
	a.End(fmt.Sprintf("node %d (%s) killed", k.node, s.Addr))
}
