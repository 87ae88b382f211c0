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

// clock-jump:node=I,count=N,by=D — the clocks of servers I..I+N-1 (count
// default 1) jump forward by D (default 2 x the TTL): every key with a TTL
// loses D of it at once, and those with D or less left expire (ClockJump
// says how this is done without faking the server's clock).
func init() {
	Register("clock-jump", Info{
		Desc: "a server's clock jumps forward by D: its keys' TTLs lose D at once, those with less left expire",
		Params: []registry.Param{NodeParam,
			{Name: "count", Doc: "servers from node on whose clocks jump (3 = nodes 0, 1, 2 with node=0)", Default: 1, Check: registry.Between(1, 64)},
			Span("by", "the jump; 0 = 2 x the TTL", 0)},
		Needs: NeedsOwnServer,
	}, func(v registry.Values) (Fault, error) {
		return clockJump{node: v.Int("node"), count: v.Int("count"), by: v.Duration("by")}, nil
	})
}

// clockJump is the clock-jump fault's config.
type clockJump struct {
	node, count int           // servers node .. node+count-1
	by          time.Duration // the jump; 0 = 2 x the TTL
}

func (c clockJump) Check(l Layout) []error { return l.CheckServers("clock-jump", c.node, c.count) }

func (c clockJump) Act(_ context.Context, a *Action) {
	a.Begin()
	by := c.by
	if by == 0 {
		by = 2 * a.Env().TTL
	}
	servers := a.Env().Servers
	var parts []string
	for k := c.node; k < c.node+max(c.count, 1); k++ {
		if k >= len(servers) {
			parts = append(parts, fmt.Sprintf("no server %d (the scenario has %d)", k, len(servers)))
			continue
		}
		moved, expired, err := ClockJump(servers[k], by)
		if err != nil {
			parts = append(parts, fmt.Sprintf("node %d: %v", k, err))
			continue
		}
		parts = append(parts, fmt.Sprintf("node %d: +%v (%d keys expired, %d moved)", k, by, expired, moved))
	}
	a.End(strings.Join(parts, "; "))
}

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
