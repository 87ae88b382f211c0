package redisadmin

import "testing"

func TestInfoInt(t *testing.T) {
	if n, ok := infoInt("# Stats\r\ntotal_connections_received:3\r\ntotal_commands_processed:42\r\n", "total_commands_processed"); !ok || n != 42 {
		t.Fatalf("infoInt = %d %v", n, ok)
	}
	if _, ok := infoInt("# Stats\r\ntotal_connections_received:3\r\n", "total_commands_processed"); ok {
		t.Fatal("infoInt found a field the reply lacks")
	}
}

// CostDelta leaves out the snapshots' INFO and the connections' set-up,
// and turns the CPU pseudo-command into milliseconds.
func TestCostDelta(t *testing.T) {
	before := map[string]int64{"get": 10, "info": 1, cpuKey: 1000}
	after := map[string]int64{"get": 30, "set": 20, "info": 2, "hello": 4, "ping": 1, cpuKey: 6000}
	c := CostDelta(before, after, 10, nil)
	if c.Commands != 40 || c.ByCommand["get"] != 20 || c.ByCommand["set"] != 20 || len(c.ByCommand) != 2 {
		t.Fatalf("cost %+v, want get 20, set 20, commands 40", c)
	}
	if c.CommandsPerOp != 4 || c.ServerCPUMS != 5 || c.ServerCPUMSPer1kOps != 500 {
		t.Fatalf("cost %+v, want 4 commands/op, 5 ms CPU, 500 ms per 1k ops", c)
	}
}
