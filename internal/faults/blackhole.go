package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
)

// blackhole:node=I,for=D — through the proxy, nothing flows either way
// between the clients and server I for D (default 2s; 0: until the
// scenario ends): calls hang until their timeout, and new connections are
// accepted and then hang (never refused). Then traffic flows again, what
// was held delivered in order (Proxies.Blackhole).
func init() {
	Register("blackhole", Info{
		Desc:   "no traffic between the clients and a server for a while, through the proxy: calls and new connections hang, never refused",
		Params: []registry.Param{NodeParam, Span("for", "how long; 0 = until the scenario ends", 2*time.Second)},
		Proxy:  true,
	}, func(v registry.Values) (Fault, error) {
		return blackhole{node: v.Int("node"), d: v.Duration("for")}, nil
	})
}

// blackhole is the blackhole fault's config.
type blackhole struct {
	node int           // the proxied server's index
	d    time.Duration // how long; 0 = until the scenario ends
}

func (b blackhole) Check(l Layout) []error { return l.CheckProxyNode("blackhole", b.node) }

func (b blackhole) Act(ctx context.Context, a *Action) {
	a.Begin()
	px := a.Env().Proxies
	if px == nil {
		a.End("not done: no proxy in front of the nodes")
		return
	}
	if err := px.Blackhole(b.node); err != nil {
		a.End("not done: " + err.Error())
		return
	}
	began := time.Now()
	ended := Wait(ctx, b.d)
	_ = px.RemoveBlackhole(b.node)
	note := fmt.Sprintf("node %d: blackholed %v", b.node, time.Since(began).Round(time.Millisecond))
	if ended {
		note += fmt.Sprintf(" (of %v: the scenario ended)", b.d)
	}
	a.End(note)
}
