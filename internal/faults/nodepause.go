package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
)

// node-pause:node=I,for=D — SIGSTOP server I (default 0), SIGCONT after D
// (default 500ms; 0 also takes 500ms) or when the scenario stops,
// whichever comes first.
func init() {
	Register("node-pause", Info{
		Desc:   "SIGSTOP a server, SIGCONT after for or at the scenario's end",
		Params: []registry.Param{NodeParam, Span("for", "pause length", 500*time.Millisecond)},
		Needs:  NeedsOwnServer,
	}, func(v registry.Values) (Fault, error) {
		return nodePause{node: v.Int("node"), d: v.Duration("for")}, nil
	})
}

// nodePause is the node-pause fault's config.
type nodePause struct {
	node int           // the server's index
	d    time.Duration // the pause; 0 = 500ms
}

func (p nodePause) Check(l Layout) []error { return l.CheckServers("node-pause", p.node, 1) }

func (p nodePause) Act(ctx context.Context, a *Action) {
	a.Begin()
	s, err := a.Server(p.node)
	if err != nil {
		a.End(err.Error())
		return
	}
	d := p.d
	if d == 0 {
		d = 500 * time.Millisecond
	}
	// The pause ends after d or when the scenario stops, whichever comes
	// first: a server still stopped after the end would hold up the stop
	// itself (calls in flight, the end-of-run INFO, the check of the
	// data) until d ran out.
	s.Freeze()
	began := time.Now()
	note := ""
	if Wait(ctx, d) {
		note = fmt.Sprintf(" (of %v: the scenario ended)", d)
	}
	s.Thaw()
	a.End(fmt.Sprintf("node %d (%s) paused %v%s", p.node, s.Addr, time.Since(began).Round(time.Millisecond), note))
}
