package faults

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	_ "github.com/lockbench/lockbench/drivers/goredis"
	_ "github.com/lockbench/lockbench/drivers/rueidis"
	"github.com/lockbench/lockbench/internal/topology"
)

// proxiedServer starts one server and a proxy in front of it.
func proxiedServer(t *testing.T) (*topology.Server, *Proxies) {
	t.Helper()
	topo, err := topology.Start(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(topo.Stop)
	p, err := StartProxies(topo.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return topo.Servers[0], p
}

func openVia(t *testing.T, driver, addr, password string, o drivers.Options) drivers.Driver {
	t.Helper()
	o.Endpoint = drivers.Endpoint{Addr: addr, Password: password}
	if o.PoolSize == 0 {
		o.PoolSize = 1
	}
	d, err := drivers.Open(driver, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := d.Do(ctx, "PING"); err != nil {
		t.Fatalf("%s PING through the proxy: %v", driver, err)
	}
	return d
}

// A held reply: SET NX times out on the client with a short read timeout,
// and the server has the key with the token (the orphan of issue 17).
// Both drivers, both ways rueidis takes a read timeout (as the
// connection's ConnWriteTimeout, and as a per-call deadline below it),
// and a dropped reply (delay=0).
func TestReplyLoss(t *testing.T) {
	t.Parallel()
	srv, p := proxiedServer(t)
	cases := []struct {
		name, driver string
		opt          drivers.Options
		delay        time.Duration
	}{
		{"goredis", "goredis", drivers.Options{ReadTimeout: 300 * time.Millisecond}, 3 * time.Second},
		{"rueidis-conn", "rueidis", drivers.Options{ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond}, 3 * time.Second},
		{"rueidis-call", "rueidis", drivers.Options{ReadTimeout: 300 * time.Millisecond}, 3 * time.Second},
		{"goredis-drop", "goredis", drivers.Options{ReadTimeout: 300 * time.Millisecond}, 0},
		{"rueidis-drop", "rueidis", drivers.Options{ReadTimeout: 300 * time.Millisecond}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := openVia(t, c.driver, p.Addr(0), srv.Password, c.opt)
			key, token := "reply-loss:"+c.name, "token-"+c.name
			// rueidis spreads commands at random over a few connections
			// and dials each on first use: use them all before the fault
			// (a handshake whose reply is held would never send the SET).
			for k := 0; k < 64; k++ {
				if _, err := d.Do(context.Background(), "GET", key); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.AddReplyLoss(0, 1, c.delay); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			ok, err := d.SetNX(context.Background(), key, token, 10*time.Second)
			took := time.Since(start)
			if err := p.RemoveReplyLoss(0); err != nil {
				t.Fatal(err)
			}
			if err == nil || drivers.ErrorKind(err) != "timeout" {
				t.Fatalf("SetNX with its reply held = %v, %v; want a timeout error", ok, err)
			}
			if took > 2*time.Second {
				t.Fatalf("SetNX took %v with a 300ms read timeout", took)
			}
			got, err := topology.Command(srv.Addr, srv.Password, 2*time.Second, "GET", key)
			if err != nil || got != token {
				t.Fatalf("GET %s on the server = %q, %v; want the token %q: the SET was applied", key, got, err, token)
			}
			// After the fault the driver works again (a new connection).
			deadline := time.Now().Add(5 * time.Second)
			for {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				r, err := d.Do(ctx, "GET", key)
				cancel()
				if err == nil && r.Str == token {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("GET after the reply loss: %+v, %v", r, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
	// p=0 holds nothing.
	if err := p.AddReplyLoss(0, 0, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, err := topology.Command(p.Addr(0), srv.Password, time.Second, "PING"); err != nil || got != "PONG" {
		t.Fatalf("PING with p=0 = %q, %v", got, err)
	}
	for _, bad := range []float64{-0.1, 1.1} {
		if err := p.AddReplyLoss(0, bad, time.Second); err == nil {
			t.Errorf("AddReplyLoss p=%v accepted", bad)
		}
	}
}

// A blackhole: a call with a 500 ms deadline returns at about it, a new
// connection is accepted and then hangs (not refused), and after the
// blackhole what was sent meanwhile reaches the server.
func TestBlackhole(t *testing.T) {
	t.Parallel()
	srv, p := proxiedServer(t)
	ds := map[string]drivers.Driver{}
	for _, name := range []string{"goredis", "rueidis"} {
		ds[name] = openVia(t, name, p.Addr(0), srv.Password, drivers.Options{})
	}
	if err := p.Blackhole(0); err != nil {
		t.Fatal(err)
	}
	const deadline = 500 * time.Millisecond
	for name, d := range ds {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		start := time.Now()
		_, err := d.SetNX(ctx, "blackhole:"+name, "v", 10*time.Second)
		took := time.Since(start)
		cancel()
		if err == nil {
			t.Fatalf("%s: SetNX through a blackhole succeeded", name)
		}
		if took > 2*deadline {
			t.Fatalf("%s: SetNX with a %v deadline returned after %v", name, deadline, took)
		}
	}
	// A new connection: accepted, then silent.
	c, err := net.DialTimeout("tcp", p.Addr(0), time.Second)
	if err != nil {
		t.Fatalf("a new connection during the blackhole was refused: %v", err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("reading a new connection in the blackhole: %q, %v; want a timeout (it hangs)", buf[:n], err)
	}
	if err := topology.Ping(p.Addr(0), srv.Password, 300*time.Millisecond); err == nil {
		t.Fatal("PING through the blackhole answered")
	}
	if err := p.RemoveBlackhole(0); err != nil {
		t.Fatal(err)
	}
	// The held PING reaches the server: it answers (NOAUTH: no AUTH sent).
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err = c.Read(buf); err != nil || !strings.HasPrefix(string(buf[:n]), "-NOAUTH") {
		t.Fatalf("the held PING after the blackhole: %q, %v; want -NOAUTH", buf[:n], err)
	}
	if err := topology.Ping(p.Addr(0), srv.Password, 2*time.Second); err != nil {
		t.Fatalf("PING after the blackhole: %v", err)
	}
	if err := p.RemoveBlackhole(0); err != nil {
		t.Fatalf("RemoveBlackhole twice: %v", err)
	}
}
