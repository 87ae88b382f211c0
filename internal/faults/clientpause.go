package faults

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/topology"
)

// client-pause:node=I,for=D,mode=M — CLIENT PAUSE D (default 500ms) WRITE
// (default) or ALL on server I; CLIENT UNPAUSE when the scenario ends
// first.
func init() {
	Register("client-pause", Info{
		Desc: "CLIENT PAUSE a server's clients (mode write: only writes wait; all: every command)",
		Params: []registry.Param{NodeParam,
			{Name: "for", Doc: "pause length (at least 1ms)", Default: 500 * time.Millisecond, Check: registry.DurationBetween(time.Millisecond, time.Hour)},
			{Name: "mode", Doc: "write (writes and may-write scripts wait) or all", Default: "write", Check: registry.OneOf("write", "all")}},
		Needs: NeedsOwnServer,
	}, func(v registry.Values) (Fault, error) {
		return clientPause{node: v.Int("node"), d: v.Duration("for"), mode: v.String("mode")}, nil
	})
}

// clientPause is the client-pause fault's config.
type clientPause struct {
	node int           // the server's index
	d    time.Duration // the pause, at least 1ms
	mode string        // "write" or "all"
}

func (p clientPause) Check(l Layout) []error { return l.CheckServers("client-pause", p.node, 1) }

func (p clientPause) Act(ctx context.Context, a *Action) {
	a.Begin()
	a.End(p.pause(ctx, a))
}

func (p clientPause) pause(ctx context.Context, a *Action) string {
	s, err := a.Server(p.node)
	if err != nil {
		return err.Error()
	}
	d := p.d
	if d == 0 {
		d = 500 * time.Millisecond
	}
	mode := strings.ToUpper(p.mode)
	if mode == "" {
		mode = "WRITE"
	}
	if _, err := topology.Command(s.Addr, s.Password, adminTimeout, "CLIENT", "PAUSE", strconv.FormatInt(d.Milliseconds(), 10), mode); err != nil {
		return fmt.Sprintf("node %d (%s): CLIENT PAUSE failed: %v", p.node, s.Addr, err)
	}
	began := time.Now()
	note := ""
	if Wait(ctx, d) {
		// The server would keep its clients paused after the end and hold
		// up the stop (calls in flight, the end check).
		_, _ = topology.Command(s.Addr, s.Password, adminTimeout, "CLIENT", "UNPAUSE")
		note = fmt.Sprintf(" (of %v: the scenario ended; CLIENT UNPAUSE)", d)
	}
	return fmt.Sprintf("node %d (%s): CLIENT PAUSE %s %v%s", p.node, s.Addr, mode, time.Since(began).Round(time.Millisecond), note)
}
