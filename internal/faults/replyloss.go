package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
)

// reply-loss:node=I,p=P,delay=D,for=F — through the proxy in front of
// server I, a share P (default 0.1) of its reply chunks is held for D
// (default 10s, past the drivers' 5 s read timeout) before it goes on, or
// with delay=0 the connection goes silent from that chunk on (a reply
// dropped: TCP cannot lose bytes in the middle of a stream), for F
// (default 0: until the end). Commands still reach the server and run:
// the client times out on a command that was applied
// (Proxies.AddReplyLoss).
func init() {
	Register("reply-loss", Info{
		Desc: "the server applies the command but a share p of its replies is held past the client's timeout (or dropped), through the proxy",
		Params: []registry.Param{NodeParam,
			{Name: "p", Doc: "share of reply chunks held (0..1)", Default: 0.1, Check: registry.Between(0.0, 1.0)},
			Span("delay", "how long a reply is held before it goes on (exceed the read timeout); 0 = dropped: the connection goes silent", 10*time.Second),
			Span("for", "how long; 0 = until the end", 0)},
		Proxy: true,
	}, func(v registry.Values) (Fault, error) {
		return replyLoss{node: v.Int("node"), p: v.Float("p"), delay: v.Duration("delay"), d: v.Duration("for")}, nil
	})
}

// replyLoss is the reply-loss fault's config (the toxic that does it is
// lossToxic, toxics.go).
type replyLoss struct {
	node  int           // the proxied server's index
	p     float64       // share of reply chunks held, 0..1
	delay time.Duration // how long one is held; 0 = dropped
	d     time.Duration // how long; 0 = until the end
}

func (r replyLoss) Check(l Layout) []error { return l.CheckProxyNode("reply-loss", r.node) }

func (r replyLoss) Act(ctx context.Context, a *Action) {
	a.Begin()
	px := a.Env().Proxies
	if px == nil {
		a.End("not done: no proxy in front of the nodes")
		return
	}
	if err := px.AddReplyLoss(r.node, r.p, r.delay); err != nil {
		a.End("not done: " + err.Error())
		return
	}
	Wait(ctx, r.d)
	_ = px.RemoveReplyLoss(r.node)
	what := fmt.Sprintf("held %v", r.delay)
	if r.delay == 0 {
		what = "dropped (the connection went silent)"
	}
	a.End(fmt.Sprintf("node %d: a share %v of the replies %s", r.node, r.p, what))
}
