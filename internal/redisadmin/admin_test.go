package redisadmin_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/lockbench/lockbench/drivers"
	_ "github.com/lockbench/lockbench/drivers/all"
	"github.com/lockbench/lockbench/internal/redisadmin"
	"github.com/lockbench/lockbench/internal/topology"
)

var server *topology.Server

func TestMain(m *testing.M) {
	topo, err := topology.Start(context.Background(), 1)
	if err != nil {
		fmt.Fprintln(os.Stderr, "redisadmin tests need redis-server:", err)
		os.Exit(1)
	}
	server = topo.Servers[0]
	code := m.Run()
	topo.Stop()
	os.Exit(code)
}

func open(t *testing.T) drivers.Driver {
	t.Helper()
	d, err := drivers.Open("rueidis", drivers.Options{Endpoint: drivers.Endpoint{Addr: server.Addr, Password: server.Password}, PoolSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func do(t *testing.T, d drivers.Driver, args ...string) drivers.Reply {
	t.Helper()
	r, err := d.Do(context.Background(), args...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// DeleteKeys deletes the prefix's keys (more than one SCAN batch) and no
// other; KeyCount counts what is left; an empty prefix is refused.
func TestDeleteKeysAndKeyCount(t *testing.T) {
	ctx := context.Background()
	d := open(t)
	for i := 0; i < 2500; i++ {
		do(t, d, "SET", fmt.Sprintf("rat:del:%d", i), "1")
	}
	do(t, d, "SET", "rat:keep", "1")
	n, err := redisadmin.DeleteKeys(ctx, d, "rat:del:")
	if err != nil || n != 2500 {
		t.Fatalf("DeleteKeys = %d, %v; want 2500", n, err)
	}
	if c, err := redisadmin.KeyCount(ctx, d); err != nil || c != 1 {
		t.Fatalf("KeyCount = %d, %v; want 1 (rat:keep)", c, err)
	}
	if _, err := redisadmin.DeleteKeys(ctx, d, ""); err == nil {
		t.Fatal("DeleteKeys with an empty prefix succeeded")
	}
	do(t, d, "DEL", "rat:keep")
}

// StuckLocks counts the keys without a TTL, not the ones with one or the
// missing ones, across more than one batch.
func TestStuckLocks(t *testing.T) {
	ctx := context.Background()
	d := open(t)
	var keys []string
	for i := 0; i < 1200; i++ {
		k := fmt.Sprintf("rat:lock:%d", i)
		keys = append(keys, k)
		switch i % 3 {
		case 0:
			do(t, d, "SET", k, "1") // stuck
		case 1:
			do(t, d, "SET", k, "1", "PX", "60000")
		}
	}
	n, err := redisadmin.StuckLocks(ctx, []drivers.Driver{d}, keys)
	if err != nil || n != 400 {
		t.Fatalf("StuckLocks = %d, %v; want 400", n, err)
	}
	if _, err := redisadmin.DeleteKeys(ctx, d, "rat:lock:"); err != nil {
		t.Fatal(err)
	}
}

func TestServerVersionAndCommandStats(t *testing.T) {
	ctx := context.Background()
	d := open(t)
	if v, err := redisadmin.ServerVersion(ctx, d); err != nil || v == "" {
		t.Fatalf("ServerVersion = %q, %v", v, err)
	}
	before, err := redisadmin.CommandStats(ctx, []drivers.Driver{d})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 7; i++ {
		do(t, d, "INCR", "rat:stats")
	}
	after, err := redisadmin.CommandStats(ctx, []drivers.Driver{d})
	if err != nil {
		t.Fatal(err)
	}
	if c := redisadmin.CostDelta(before, after, 7, nil); c.ByCommand["incr"] != 7 || c.Commands != 7 {
		t.Fatalf("cost %+v, want 7 incr and nothing else", c)
	}
	do(t, d, "DEL", "rat:stats")
}
