package faults

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/topology"
)

func TestProxyLatency(t *testing.T) {
	t.Parallel()
	topo, err := topology.Start(context.Background(), 1)
	if errors.Is(err, topology.ErrNoRedisServer) {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Stop()
	srv := topo.Servers[0]

	p, err := StartProxies(topo.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	addr := p.Addr(0)
	if host, _, err := net.SplitHostPort(addr); err != nil || host != "127.0.0.1" || addr == srv.Addr {
		t.Fatalf("proxy address %q (upstream %s): %v", addr, srv.Addr, err)
	}
	const timeout = 2 * time.Second

	// (1) Commands pass through the proxy.
	if got, err := topology.Command(addr, srv.Password, timeout, "SET", "latency-key", "v1"); err != nil || got != "OK" {
		t.Fatalf("SET through proxy = %q, %v", got, err)
	}
	if got, err := topology.Command(addr, srv.Password, timeout, "GET", "latency-key"); err != nil || got != "v1" {
		t.Fatalf("GET through proxy = %q, %v", got, err)
	}

	// (2) With a latency toxic every reply is late by at least the delay.
	const delay = 150 * time.Millisecond
	if err := p.AddLatency(0, delay, 0); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if got, err := topology.Command(addr, srv.Password, timeout, "PING"); err != nil || got != "PONG" {
		t.Fatalf("PING with latency = %q, %v", got, err)
	}
	if took := time.Since(start); took < delay {
		t.Fatalf("PING with %v latency took %v", delay, took)
	}

	// Adding again replaces the toxic (here: 100ms +- 50ms, so >= 50ms).
	if err := p.AddLatency(0, 100*time.Millisecond, 50*time.Millisecond); err != nil {
		t.Fatalf("replacing latency: %v", err)
	}
	start = time.Now()
	if got, err := topology.Command(addr, srv.Password, timeout, "PING"); err != nil || got != "PONG" {
		t.Fatalf("PING with jitter = %q, %v", got, err)
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Fatalf("PING with 100ms+-50ms latency took %v", took)
	}

	// (3) Removing it (twice: the second is a no-op) leaves a working proxy.
	for n := 0; n < 2; n++ {
		if err := p.RemoveLatency(0); err != nil {
			t.Fatalf("RemoveLatency #%d: %v", n+1, err)
		}
	}
	if got, err := topology.Command(addr, srv.Password, timeout, "GET", "latency-key"); err != nil || got != "v1" {
		t.Fatalf("GET after RemoveLatency = %q, %v", got, err)
	}

	// (4) Bad indexes and negative durations are errors.
	for _, i := range []int{-1, 1} {
		if err := p.AddLatency(i, delay, 0); err == nil {
			t.Errorf("AddLatency(%d) succeeded with 1 proxy", i)
		}
		if err := p.RemoveLatency(i); err == nil {
			t.Errorf("RemoveLatency(%d) succeeded with 1 proxy", i)
		}
	}
	if err := p.AddLatency(0, -time.Millisecond, 0); err == nil {
		t.Error("AddLatency with a negative delay succeeded")
	}

	// (5) Close ends open client connections and the listener; twice is fine.
	open, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	if _, err := open.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	// Read the PONG so the proxy has surely accepted this connection.
	buf := make([]byte, 64)
	_ = open.SetReadDeadline(time.Now().Add(timeout))
	if _, err := open.Read(buf); err != nil {
		t.Fatalf("reading through proxy before Close: %v", err)
	}
	p.Close()
	p.Close()
	_ = open.SetReadDeadline(time.Now().Add(timeout))
	if n, err := open.Read(buf); err == nil {
		t.Errorf("open connection still reads %q after Close", buf[:n])
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Error("open connection not closed by Close")
	}
	if c, err := net.DialTimeout("tcp", addr, timeout); err == nil {
		c.Close()
		t.Errorf("proxy %s still accepts connections after Close", addr)
	}
	if err := p.AddLatency(0, delay, 0); err == nil {
		t.Error("AddLatency after Close succeeded")
	}
}

func TestProxyStartErrors(t *testing.T) {
	t.Parallel()
	if p, err := StartProxies([]string{"127.0.0.1:6379", "no-port"}); err == nil {
		p.Close()
		t.Fatal("StartProxies accepted an upstream without a port")
	}
	p, err := StartProxies(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AddLatency(0, time.Millisecond, 0); err == nil {
		t.Error("AddLatency(0) succeeded with no proxies")
	}
	p.Close()
}
