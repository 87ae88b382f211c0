package faults

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/topology"
)

// adminTimeout bounds one admin command a fault sends to a server.
const adminTimeout = 5 * time.Second

// clockJumpScript moves every key's expiry on one server as a forward
// jump of the server's clock by ARGV[1] ms would: a key with a TTL loses
// that much of it, and one with no more than that left expires (is
// deleted). It runs as one script, so the jump is atomic: no command runs
// on the server while its keys move. It returns {keys moved, keys
// expired}.
const clockJumpScript = `
local by = tonumber(ARGV[1])
local cursor = "0"
local moved, expired = 0, 0
repeat
  local r = redis.call("SCAN", cursor, "COUNT", 1000)
  cursor = r[1]
  for _, k in ipairs(r[2]) do
    local t = redis.call("PTTL", k)
    if t > 0 then
      if t <= by then
        redis.call("DEL", k)
        expired = expired + 1
      else
        redis.call("PEXPIRE", k, t - by)
        moved = moved + 1
      end
    end
  end
until cursor == "0"
return moved .. " " .. expired
`

// ClockJump makes the clock of s jump forward by d, as far as its keys
// can tell: every key with a TTL loses d of it at once, and the keys with
// d or less left expire. It returns how many keys were moved and how many
// expired.
//
// Redis stores a key's expiry as an absolute Unix time in ms (SET PX 10000
// stores now + 10000) and expires a key when its wall-clock time
// (gettimeofday, cached per command) passes it, so a clock that jumps
// forward by d shortens every stored TTL by d and leaves later relative
// TTLs (SET PX, PEXPIRE) as they are: exactly what this does. The
// server's own time (TIME) is not moved; lockbench's strategies never read
// it. (Running redis-server under libfaketime with an offset file would
// move TIME too, but Debian's redis-server, linked with jemalloc, hangs at
// start under libfaketime 0.9.10: jemalloc's first malloc calls
// clock_gettime, libfaketime's lazy initialisation fails a dlvsym and
// glibc's error path calls malloc again, which waits for jemalloc's init
// lock forever.)
func ClockJump(s *topology.Server, d time.Duration) (moved, expired int, err error) {
	ms := d.Milliseconds()
	if ms < 1 {
		return 0, 0, fmt.Errorf("faults: clock-jump by %v: at least 1ms", d)
	}
	out, err := topology.Command(s.Addr, s.Password, adminTimeout, "EVAL", clockJumpScript, "0", strconv.FormatInt(ms, 10))
	if err != nil {
		return 0, 0, fmt.Errorf("faults: clock-jump on %s: %w", s.Addr, err)
	}
	if _, err := fmt.Sscanf(out, "%d %d", &moved, &expired); err != nil {
		return 0, 0, fmt.Errorf("faults: clock-jump on %s: reply %q", s.Addr, out)
	}
	return moved, expired, nil
}

// actMore acts the faults of this file and proxyfaults.go (window i is
// open and begun); false for another fault.
func (in *Injector) actMore(ctx context.Context, sp Spec, i int) bool {
	switch sp.Name {
	case "reply-loss", "blackhole":
		in.close(i, in.proxyFault(ctx, sp))
	case "script-flush":
		in.close(i, in.scriptFlush(ctx, sp))
	case "client-pause":
		in.close(i, in.clientPause(ctx, sp))
	case "clock-jump":
		in.close(i, in.clockJump(sp))
	default:
		return false
	}
	return true
}

// wait waits d (0: until the end) or until ctx ends; it says which came.
func wait(ctx context.Context, d time.Duration) (ended bool) {
	if d == 0 {
		<-ctx.Done()
		return true
	}
	select {
	case <-time.After(d):
		return false
	case <-ctx.Done():
		return true
	}
}

func (in *Injector) proxyFault(ctx context.Context, sp Spec) string {
	if in.env.Proxies == nil {
		return "not done: no proxy in front of the nodes"
	}
	var err error
	var note string
	remove := func() error { return in.env.Proxies.RemoveReplyLoss(sp.Node) }
	if sp.Name == "reply-loss" {
		err = in.env.Proxies.AddReplyLoss(sp.Node, sp.P, sp.Delay)
		what := fmt.Sprintf("held %v", sp.Delay)
		if sp.Delay == 0 {
			what = "dropped (the connection went silent)"
		}
		note = fmt.Sprintf("node %d: a share %v of the replies %s", sp.Node, sp.P, what)
	} else {
		err = in.env.Proxies.Blackhole(sp.Node)
		remove = func() error { return in.env.Proxies.RemoveBlackhole(sp.Node) }
	}
	if err != nil {
		return "not done: " + err.Error()
	}
	began := time.Now()
	ended := wait(ctx, sp.For)
	_ = remove()
	if sp.Name == "blackhole" {
		note = fmt.Sprintf("node %d: blackholed %v", sp.Node, time.Since(began).Round(time.Millisecond))
		if ended {
			note += fmt.Sprintf(" (of %v: the scenario ended)", sp.For)
		}
	}
	return note
}

func (in *Injector) scriptFlush(ctx context.Context, sp Spec) string {
	s, err := in.node(sp)
	if err != nil {
		return err.Error()
	}
	n := 0
	for {
		if _, err := topology.Command(s.Addr, s.Password, adminTimeout, "SCRIPT", "FLUSH"); err != nil {
			return fmt.Sprintf("node %d (%s): SCRIPT FLUSH failed after %d: %v", sp.Node, s.Addr, n, err)
		}
		n++
		if sp.Every == 0 || wait(ctx, sp.Every) {
			break
		}
	}
	if sp.Every == 0 {
		return fmt.Sprintf("node %d (%s): SCRIPT FLUSH", sp.Node, s.Addr)
	}
	return fmt.Sprintf("node %d (%s): SCRIPT FLUSH %d times, every %v", sp.Node, s.Addr, n, sp.Every)
}

func (in *Injector) clientPause(ctx context.Context, sp Spec) string {
	s, err := in.node(sp)
	if err != nil {
		return err.Error()
	}
	d := sp.For
	if d == 0 {
		d = 500 * time.Millisecond
	}
	mode := strings.ToUpper(sp.Mode)
	if mode == "" {
		mode = "WRITE"
	}
	if _, err := topology.Command(s.Addr, s.Password, adminTimeout, "CLIENT", "PAUSE", strconv.FormatInt(d.Milliseconds(), 10), mode); err != nil {
		return fmt.Sprintf("node %d (%s): CLIENT PAUSE failed: %v", sp.Node, s.Addr, err)
	}
	began := time.Now()
	note := ""
	if wait(ctx, d) {
		// The server would keep its clients paused after the end and hold
		// up the stop (calls in flight, the end check).
		_, _ = topology.Command(s.Addr, s.Password, adminTimeout, "CLIENT", "UNPAUSE")
		note = fmt.Sprintf(" (of %v: the scenario ended; CLIENT UNPAUSE)", d)
	}
	return fmt.Sprintf("node %d (%s): CLIENT PAUSE %s %v%s", sp.Node, s.Addr, mode, time.Since(began).Round(time.Millisecond), note)
}

func (in *Injector) clockJump(sp Spec) string {
	by := sp.By
	if by == 0 {
		by = 2 * in.env.TTL
	}
	count := max(sp.Count, 1)
	var parts []string
	for k := sp.Node; k < sp.Node+count; k++ {
		if k >= len(in.env.Servers) {
			parts = append(parts, fmt.Sprintf("no server %d (the scenario has %d)", k, len(in.env.Servers)))
			continue
		}
		moved, expired, err := ClockJump(in.env.Servers[k], by)
		if err != nil {
			parts = append(parts, fmt.Sprintf("node %d: %v", k, err))
			continue
		}
		parts = append(parts, fmt.Sprintf("node %d: +%v (%d keys expired, %d moved)", k, by, expired, moved))
	}
	return strings.Join(parts, "; ")
}
