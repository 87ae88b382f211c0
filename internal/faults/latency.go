package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
)

// latency:node=I,delay=D,jitter=J,for=F — add D (+-J) to every reply from
// server I (default 50ms, 0, until the end), through the in-process
// toxiproxy proxy that the clients of the scenario connect through
// (Proxies.AddLatency). J may not exceed D.
func init() {
	Register("latency", Info{
		Desc: "add delay (+-jitter) to every reply of one server, through an in-process toxiproxy proxy",
		Params: []registry.Param{NodeParam,
			Span("delay", "added to every reply", 50*time.Millisecond),
			Span("jitter", "random spread around delay (+-)", 0),
			Span("for", "how long; 0 = until the end", 0)},
		Proxy: true,
	}, func(v registry.Values) (Fault, error) {
		l := latency{node: v.Int("node"), delay: v.Duration("delay"), jitter: v.Duration("jitter"), d: v.Duration("for")}
		if l.jitter > l.delay {
			return nil, fmt.Errorf("jitter=%v exceeds delay=%v (a reply cannot come early)", l.jitter, l.delay)
		}
		return l, nil
	})
}

// latency is the latency fault's config.
type latency struct {
	node          int           // the proxied server's index
	delay, jitter time.Duration // added to each reply, +- jitter (jitter <= delay)
	d             time.Duration // how long; 0 = until the end
}

func (l latency) Check(lay Layout) []error { return lay.CheckProxyNode("latency", l.node) }

func (l latency) Act(ctx context.Context, a *Action) {
	a.Begin()
	px := a.Env().Proxies
	if px == nil {
		a.End("not done: no proxy in front of the nodes")
		return
	}
	if err := px.AddLatency(l.node, l.delay, l.jitter); err != nil {
		a.End("not done: " + err.Error())
		return
	}
	Wait(ctx, l.d)
	_ = px.RemoveLatency(l.node)
	a.End(fmt.Sprintf("node %d: +%v (+-%v) on every reply", l.node, l.delay, l.jitter))
}
