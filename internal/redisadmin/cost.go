package redisadmin

import (
	"context"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/report"
)

// cpuKey holds the servers' CPU time (µs) in CommandStats' map.
const cpuKey = "\x00cpu_us"

// CommandStats reads INFO commandstats from every node and returns the
// calls per command name summed over the nodes, and the servers' CPU time
// (used_cpu_sys + used_cpu_user, µs) under a key no command has; CostDelta
// takes two such snapshots apart.
func CommandStats(ctx context.Context, ds []drivers.Driver) (map[string]int64, error) {
	out := map[string]int64{}
	var all []drivers.Driver
	for _, d := range ds {
		nodes, _, err := perNode(ctx, d)
		if err != nil {
			return nil, err
		}
		all = append(all, nodes...)
	}
	for _, d := range all {
		r, err := d.Do(ctx, "INFO", "commandstats", "cpu")
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(r.Str, "\n") {
			name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
			if ok && (name == "used_cpu_sys" || name == "used_cpu_user") {
				if f, err := strconv.ParseFloat(rest, 64); err == nil {
					out[cpuKey] += int64(f * 1e6)
				}
				continue
			}
			if !ok || !strings.HasPrefix(name, "cmdstat_") {
				continue
			}
			calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
			n, err := strconv.ParseInt(calls, 10, 64)
			if err != nil {
				continue
			}
			out[strings.TrimPrefix(name, "cmdstat_")] += n
		}
	}
	return out, nil
}

// CostDelta is after - before (two CommandStats snapshots) as the cost of
// ops operations, without the INFO calls that took the snapshots, the
// connections' set-up commands, and the commands in minus (calls by
// command name that lockbench's own samplers made between the snapshots;
// nil: none). The pseudo-command cpuKey carries the servers' CPU time
// (µs; the samplers' share cannot be taken out of it).
func CostDelta(before, after map[string]int64, ops int64, minus map[string]int64) report.RedisCost {
	c := report.RedisCost{ByCommand: map[string]int64{}}
	if cpu := after[cpuKey] - before[cpuKey]; cpu > 0 {
		c.ServerCPUMS = float64(cpu) / 1000
		if ops > 0 {
			c.ServerCPUMSPer1kOps = c.ServerCPUMS * 1000 / float64(ops)
		}
	}
	for k, v := range after {
		if k == cpuKey {
			continue
		}
		switch k {
		case "info", "hello", "auth", "client|setinfo", "client|setname", "select", "ping":
			continue // snapshots and connection set-up, not the workload's cost
		}
		if d := v - before[k] - minus[k]; d > 0 {
			c.ByCommand[k] = d
			c.Commands += d
		}
	}
	if ops > 0 {
		c.CommandsPerOp = float64(c.Commands) / float64(ops)
	}
	return c
}
