// Package topotest has helpers for tests that need a real redis-server
// (started by internal/topology) and a driver on it.
package topotest

import (
	"context"
	"testing"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/drivers/goredis"
	"github.com/lockbench/lockbench/internal/topology"
)

// Start starts one redis-server for t (topology.Start), stopped when t
// ends (t.Cleanup). A start error fails t.
func Start(t testing.TB) *topology.Server {
	t.Helper()
	topo, err := topology.Start(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(topo.Stop)
	return topo.Servers[0]
}

// Server starts one redis-server for t (Start) and opens a goredis driver
// on it. Both end with t: the driver is closed, then the server stopped
// (t.Cleanup). A start or open error fails t.
func Server(t testing.TB) (drivers.Driver, *topology.Server) {
	t.Helper()
	s := Start(t)
	d, err := drivers.Open(goredis.Name, drivers.Options{Endpoint: drivers.Endpoint{Addr: s.Addr, Password: s.Password}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, s
}
