package report

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

// costScenario is a scenario whose raw data is only a cost window: ops
// operations and the given servers' cost, derived.
func costScenario(t *testing.T, ops int64, cost ...ServerCost) Scenario {
	t.Helper()
	s := Scenario{Strategy: "zk", Driver: "rueidis", Workload: "lock-cycle", Clients: 1,
		Raw: &Raw{WindowS: 1, Runs: 1, CostOps: ops, Cost: cost}}
	if err := Derive(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// redisEntry and zkEntry are a Redis node's cost (commands counted) and a
// baseline server's (its process CPU only, ByCommand nil).
func redisEntry(set int64, cpu float64) ServerCost {
	return ServerCost{Servers: "127.0.0.1:6379", ByCommand: map[string]int64{"set": set}, CPUMS: cpu}
}

func zkEntry(addr string, cpu float64) ServerCost {
	return ServerCost{Servers: "zookeeper " + addr, CPUMS: cpu}
}

// A baseline server's entry adds its CPU to server_cpu_ms and per 1,000
// ops, and nothing to the commands: commands/op stays the Redis nodes'.
// Redis alone derives what it did before.
func TestDeriveBaselineServerCPU(t *testing.T) {
	redis := costScenario(t, 50, redisEntry(10, 2))
	if c := redis.RedisCost; c.Commands != 10 || c.CommandsPerOp != 0.2 || c.ServerCPUMS != 2 || c.ServerCPUMSPer1kOps != 2*1000.0/50 {
		t.Fatalf("redis alone: %+v", c)
	}
	both := costScenario(t, 50, redisEntry(10, 2), zkEntry("127.0.0.1:2181", 100))
	c := both.RedisCost
	if c.Commands != 10 || c.CommandsPerOp != 0.2 || !maps.Equal(c.ByCommand, map[string]int64{"set": 10}) {
		t.Fatalf("commands %d, %v/op, %v; want the Redis node's alone", c.Commands, c.CommandsPerOp, c.ByCommand)
	}
	if c.ServerCPUMS != 102 || c.ServerCPUMSPer1kOps != 102*1000.0/50 {
		t.Fatalf("server cpu %v ms, %v per 1k ops; want 102, %v", c.ServerCPUMS, c.ServerCPUMSPer1kOps, 102*1000.0/50)
	}
}

// With no entry that counted commands (the Redis nodes could not be read,
// the baseline server's CPU could), commands/op is not measured: absent
// from the JSON, by_command null; the CPU figures are there. The entry's
// null by_command stays null through the JSON (not an empty object).
func TestDeriveCPUOnlyNotCommands(t *testing.T) {
	s := costScenario(t, 40, zkEntry("127.0.0.1:2181", 80))
	c := s.RedisCost
	if c.ByCommand != nil || c.Commands != 0 || c.CommandsPerOp != 0 || c.ServerCPUMS != 80 || c.ServerCPUMSPer1kOps != 2000 {
		t.Fatalf("redis cost %+v, want no commands, 80 ms, 2000 per 1k ops", c)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	js := string(b)
	if strings.Contains(js, `"commands_per_op"`) || !strings.Contains(js, `"server_cpu_ms_per_1k_ops":2000`) {
		t.Fatalf("JSON %s: want no commands_per_op and server_cpu_ms_per_1k_ops 2000", js)
	}
	var back Scenario
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Raw.Cost[0].ByCommand != nil {
		t.Fatalf("by_command %v after the JSON, want nil", back.Raw.Cost[0].ByCommand)
	}
	if err := Derive(&back); err != nil {
		t.Fatal(err)
	}
	if back.RedisCost.CommandsPerOp != 0 || back.RedisCost.ServerCPUMSPer1kOps != 2000 {
		t.Fatalf("derived again: %+v", back.RedisCost)
	}
	if err := Check(&Run{Scenarios: []Scenario{back}}); err != nil {
		t.Fatal(err)
	}
}

// Repeats add the baseline server's CPU up, per server, beside the Redis
// node's; the entry stays without command counts. Concurrent parts of one
// server keep the widest delta (the most CPU); two servers add up.
func TestCombineBaselineServerCPU(t *testing.T) {
	a := costScenario(t, 50, redisEntry(10, 2), zkEntry("127.0.0.1:2181", 100))
	b := costScenario(t, 30, redisEntry(6, 1), zkEntry("127.0.0.1:2181", 70))
	seq, err := Combine(Sequential, []Scenario{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(seq.Raw.Cost); n != 2 {
		t.Fatalf("%d cost entries, want 2: %+v", n, seq.Raw.Cost)
	}
	zk := seq.Raw.Cost[1]
	if zk.Servers != "zookeeper 127.0.0.1:2181" || zk.CPUMS != 170 || zk.ByCommand != nil {
		t.Fatalf("zookeeper entry %+v, want 170 ms and no command counts", zk)
	}
	c := seq.RedisCost
	if c.ServerCPUMS != a.RedisCost.ServerCPUMS+b.RedisCost.ServerCPUMS || c.ServerCPUMS != 173 || c.ServerCPUMSPer1kOps != 173*1000.0/80 {
		t.Fatalf("repeats: server cpu %v ms, %v per 1k ops; want 173, %v", c.ServerCPUMS, c.ServerCPUMSPer1kOps, 173*1000.0/80)
	}
	if c.Commands != 16 || c.CommandsPerOp != 16.0/80 {
		t.Fatalf("repeats: commands %d, %v/op; want 16, 0.2", c.Commands, c.CommandsPerOp)
	}

	// Concurrent, one server read by two processes: the widest (most CPU)
	// counted once, in either order.
	for _, parts := range [][]Scenario{{a, b}, {b, a}} {
		con, err := Combine(Concurrent, parts)
		if err != nil {
			t.Fatal(err)
		}
		if zk := con.Raw.Cost[1]; zk.CPUMS != 100 || zk.ByCommand != nil {
			t.Fatalf("concurrent, one server: zookeeper entry %+v, want the widest, 100 ms", zk)
		}
	}
	// Two servers (two independent runs merged): both counted.
	other := costScenario(t, 30, zkEntry("127.0.0.1:2182", 70))
	con, err := Combine(Concurrent, []Scenario{a, other})
	if err != nil {
		t.Fatal(err)
	}
	if c := con.RedisCost; c.ServerCPUMS != 172 || c.ServerCPUMSPer1kOps != 172*1000.0/80 || c.Commands != 10 {
		t.Fatalf("concurrent, two servers: %+v; want 172 ms over 80 ops, 10 commands", c)
	}
}

// A scenario run at the same time as others on the same servers
// (raw.shared_cost) keeps the totals but derives no cost per operation:
// commands/op, server CPU per 1k ops and client CPU per op are absent
// from the JSON, as for a segment; a repeat of it (Combine) stays shared.
func TestDeriveSharedCost(t *testing.T) {
	s := Scenario{Strategy: "atomic", Driver: "rueidis", Workload: "flash-sale", Clients: 1,
		Raw: &Raw{WindowS: 1, Runs: 1, CostOps: 50, Cost: []ServerCost{redisEntry(10, 2)}, ClientCPUS: 0.5, SharedCost: true}}
	if err := Derive(&s); err != nil {
		t.Fatal(err)
	}
	c := s.RedisCost
	if c.Commands != 10 || c.ServerCPUMS != 2 || c.CommandsPerOp != 0 || c.ServerCPUMSPer1kOps != 0 || s.ClientCPU.CPUSeconds != 0.5 || s.ClientCPU.CPUMicrosPerOp != 0 {
		t.Fatalf("redis cost %+v, client cpu %+v: want the totals, nothing per op", c, s.ClientCPU)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"commands_per_op"`, `"server_cpu_ms_per_1k_ops"`, `"cpu_us_per_op"`} {
		if strings.Contains(string(b), key) {
			t.Errorf("%s in %s", key, b)
		}
	}
	plain := s
	plain.Raw = &Raw{WindowS: 1, Runs: 1, CostOps: 50, Cost: []ServerCost{redisEntry(10, 2)}}
	both, err := Combine(Sequential, []Scenario{plain, s})
	if err != nil {
		t.Fatal(err)
	}
	if !both.Raw.SharedCost || both.RedisCost.CommandsPerOp != 0 {
		t.Fatalf("combined: shared %v, commands/op %v", both.Raw.SharedCost, both.RedisCost.CommandsPerOp)
	}
}
