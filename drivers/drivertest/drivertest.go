// Package drivertest is the conformance suite every drivers.Driver adapter
// passes against a real redis-server. An adapter's test calls Run with a
// function that opens the adapter on a server the test started.
package drivertest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/topology"
)

// Open opens the adapter under test with o.
type Open func(o drivers.Options) (drivers.Driver, error)

// Run starts one redis-server and runs every conformance case against the
// adapter opened by open.
func Run(t *testing.T, name string, open Open) {
	t.Helper()
	ctx := context.Background()
	topo, err := topology.Start(ctx, 1)
	if err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(topo.Stop)
	srv := topo.Servers[0]
	opts := drivers.Options{Endpoint: drivers.Endpoint{Addr: srv.Addr, Password: srv.Password}, PoolSize: 64}
	d, err := open(opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	if d.Name() != name {
		t.Errorf("Name() = %q, want %q", d.Name(), name)
	}

	t.Run("SetNX", func(t *testing.T) {
		key := "dt:setnx"
		ok, err := d.SetNX(ctx, key, "a", 2*time.Second)
		if err != nil || !ok {
			t.Fatalf("first SetNX = %v, %v; want true, nil", ok, err)
		}
		ok, err = d.SetNX(ctx, key, "b", 2*time.Second)
		if err != nil || ok {
			t.Fatalf("second SetNX = %v, %v; want false, nil", ok, err)
		}
		got := mustDo(t, d, "GET", key)
		if got.Str != "a" {
			t.Fatalf("GET = %+v, want a", got)
		}
		pttl, _ := mustDo(t, d, "PTTL", key).AsInt()
		if pttl <= 0 || pttl > 2000 {
			t.Fatalf("PTTL = %d, want in (0, 2000]", pttl)
		}
		if _, err := d.SetNX(ctx, "dt:setnx:zero", "x", 0); err == nil {
			t.Fatal("SetNX with ttl 0 did not fail")
		}
	})

	t.Run("SetNXExpires", func(t *testing.T) {
		key := "dt:setnx:exp"
		if ok, err := d.SetNX(ctx, key, "a", 30*time.Millisecond); !ok || err != nil {
			t.Fatalf("SetNX = %v, %v", ok, err)
		}
		deadline := time.Now().Add(2 * time.Second)
		for {
			ok, err := d.SetNX(ctx, key, "b", time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("key with 30 ms TTL still present after 2 s")
			}
			time.Sleep(5 * time.Millisecond)
		}
	})

	t.Run("DoReplies", func(t *testing.T) {
		if r := mustDo(t, d, "GET", "dt:missing"); !r.IsNil() {
			t.Fatalf("GET missing = %+v, want nil", r)
		}
		mustDo(t, d, "SET", "dt:s", "hello")
		if r := mustDo(t, d, "GET", "dt:s"); r.Kind != drivers.KindString || r.Str != "hello" {
			t.Fatalf("GET = %+v", r)
		}
		if r := mustDo(t, d, "INCRBY", "dt:n", "5"); r.Kind != drivers.KindInt || r.Int != 5 {
			t.Fatalf("INCRBY = %+v", r)
		}
		r := mustDo(t, d, "MGET", "dt:s", "dt:missing", "dt:n")
		if r.Kind != drivers.KindArray || len(r.Array) != 3 || r.Array[0].Str != "hello" || !r.Array[1].IsNil() || r.Array[2].Str != "5" {
			t.Fatalf("MGET = %+v", r)
		}
		if n, err := r.Array[2].AsInt(); err != nil || n != 5 {
			t.Fatalf("AsInt = %d, %v", n, err)
		}
	})

	t.Run("ServerError", func(t *testing.T) {
		mustDo(t, d, "SET", "dt:str", "x")
		_, err := d.Do(ctx, "LPUSH", "dt:str", "y")
		if err == nil {
			t.Fatal("LPUSH on a string did not fail")
		}
		if k := drivers.ErrorKind(err); k != "wrongtype" {
			t.Fatalf("ErrorKind = %q, want wrongtype (err %v)", k, err)
		}
		var ne *drivers.NodeError
		if !errors.As(err, &ne) || ne.Node != srv.Addr {
			t.Fatalf("error %v does not carry the node %s", err, srv.Addr)
		}
	})

	t.Run("EvalAndNoScriptFallback", func(t *testing.T) {
		s := drivers.NewScript(`redis.call('SET', KEYS[1], ARGV[1]); return redis.call('INCR', KEYS[2])`)
		mustDo(t, d, "SCRIPT", "FLUSH")
		r, err := d.Eval(ctx, s, []string{"dt:e1", "dt:e2"}, "v")
		if err != nil || r.Int != 1 {
			t.Fatalf("Eval after SCRIPT FLUSH = %+v, %v; want 1", r, err)
		}
		exists := mustDo(t, d, "SCRIPT", "EXISTS", s.SHA1)
		if len(exists.Array) != 1 || exists.Array[0].Int != 1 {
			t.Fatalf("script not loaded after fallback: %+v", exists)
		}
		r, err = d.Eval(ctx, s, []string{"dt:e1", "dt:e2"}, "v")
		if err != nil || r.Int != 2 {
			t.Fatalf("second Eval = %+v, %v; want 2", r, err)
		}
		nilScript := drivers.NewScript(`return false`)
		if r, err := d.Eval(ctx, nilScript, nil); err != nil || !r.IsNil() {
			t.Fatalf("Eval false = %+v, %v; want nil reply", r, err)
		}
		arr := drivers.NewScript(`return {1, 'two', ARGV[1]}`)
		r, err = d.Eval(ctx, arr, nil, "three")
		if err != nil || len(r.Array) != 3 || r.Array[0].Int != 1 || r.Array[1].Str != "two" || r.Array[2].Str != "three" {
			t.Fatalf("Eval array = %+v, %v", r, err)
		}
		bad := drivers.NewScript(`return redis.error_reply('BOOM it failed')`)
		if _, err := d.Eval(ctx, bad, nil); err == nil || drivers.ErrorKind(err) != "boom" {
			t.Fatalf("Eval error reply = %v (kind %q), want kind boom", err, drivers.ErrorKind(err))
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		const goroutines, each = 50, 100
		var wg sync.WaitGroup
		errs := make(chan error, goroutines)
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					if _, err := d.Do(ctx, "INCR", "dt:conc"); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if n, _ := mustDo(t, d, "GET", "dt:conc").AsInt(); n != goroutines*each {
			t.Fatalf("counter = %d, want %d", n, goroutines*each)
		}
	})

	t.Run("PSubscribe", func(t *testing.T) {
		sub, ok := d.(drivers.Subscriber)
		if !ok {
			t.Fatal("adapter does not implement drivers.Subscriber")
		}
		sctx, cancel := context.WithCancel(ctx)
		got := make(chan string, 10)
		done, err := sub.PSubscribe(sctx, "dt:ps:*", func(ch, payload string) { got <- ch + "=" + payload })
		if err != nil {
			t.Fatal(err)
		}
		// Subscribed before PSubscribe returned: the first publish is seen.
		if n := mustDo(t, d, "PUBLISH", "dt:ps:a", "1"); n.Int != 1 {
			t.Fatalf("PUBLISH reached %d subscribers, want 1", n.Int)
		}
		mustDo(t, d, "PUBLISH", "dt:other", "x")
		mustDo(t, d, "PUBLISH", "dt:ps:b", "2")
		for _, want := range []string{"dt:ps:a=1", "dt:ps:b=2"} {
			select {
			case m := <-got:
				if m != want {
					t.Fatalf("message %q, want %q", m, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("no message %q within 5 s", want)
			}
		}
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("subscription did not end within 5 s of cancel")
		}
	})

	t.Run("Pipeline", func(t *testing.T) {
		pl, ok := d.(drivers.Pipeliner)
		if !ok {
			t.Fatal("adapter does not implement drivers.Pipeliner")
		}
		mustDo(t, d, "SET", "dt:pl:str", "x")
		replies, errs := pl.Pipeline(ctx,
			[]string{"SET", "dt:pl", "v", "NX", "PX", "5000"},
			[]string{"LPUSH", "dt:pl:str", "y"},
			[]string{"WAIT", "0", "10"},
			[]string{"SET", "dt:pl", "w", "NX", "PX", "5000"},
			[]string{"GET", "dt:pl"})
		if len(replies) != 5 || len(errs) != 5 {
			t.Fatalf("%d replies, %d errors for 5 commands", len(replies), len(errs))
		}
		if errs[0] != nil || replies[0].Str != "OK" {
			t.Fatalf("SET NX: %+v %v", replies[0], errs[0])
		}
		if errs[1] == nil || drivers.ErrorKind(errs[1]) != "wrongtype" {
			t.Fatalf("LPUSH on a string: %v, want wrongtype", errs[1])
		}
		if errs[2] != nil || replies[2].Kind != drivers.KindInt || replies[2].Int != 0 {
			t.Fatalf("WAIT: %+v %v", replies[2], errs[2])
		}
		if errs[3] != nil || !replies[3].IsNil() {
			t.Fatalf("second SET NX: %+v %v, want a nil reply", replies[3], errs[3])
		}
		if errs[4] != nil || replies[4].Str != "v" {
			t.Fatalf("GET: %+v %v", replies[4], errs[4])
		}
	})

	t.Run("CanceledContext", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := d.Do(cctx, "PING"); err == nil {
			t.Fatal("Do on a canceled context did not fail")
		}
	})

	t.Run("WrongPassword", func(t *testing.T) {
		bad, err := open(drivers.Options{Endpoint: drivers.Endpoint{Addr: srv.Addr, Password: "wrong"}, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
		if err == nil {
			defer bad.Close()
			_, err = bad.Do(ctx, "PING")
		}
		if err == nil {
			t.Fatal("wrong password accepted")
		}
	})

	t.Run("ACLUser", func(t *testing.T) {
		// A user who may touch only dt:acl:* keys: AUTH with username and
		// password, and the server's key rules apply to it.
		mustDo(t, d, "ACL", "SETUSER", "dt-bench", "on", ">dt-secret", "~dt:acl:*", "+@all")
		defer d.Do(ctx, "ACL", "DELUSER", "dt-bench")
		u, err := open(drivers.Options{Endpoint: drivers.Endpoint{Addr: srv.Addr, Username: "dt-bench", Password: "dt-secret"}})
		if err != nil {
			t.Fatalf("open as an ACL user: %v", err)
		}
		defer u.Close()
		if ok, err := u.SetNX(ctx, "dt:acl:lock", "me", time.Second); err != nil || !ok {
			t.Fatalf("SetNX as the ACL user = %v, %v; want true, nil", ok, err)
		}
		if r := mustDo(t, u, "ACL", "WHOAMI"); r.Str != "dt-bench" {
			t.Fatalf("ACL WHOAMI = %+v, want dt-bench", r)
		}
		if _, err := u.Do(ctx, "SET", "dt:other", "x"); drivers.ErrorKind(err) != "noperm" {
			t.Fatalf("SET outside the user's keys = %v (kind %q), want a noperm error", err, drivers.ErrorKind(err))
		}
		bad, err := open(drivers.Options{Endpoint: drivers.Endpoint{Addr: srv.Addr, Username: "dt-bench", Password: "wrong"}, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
		if err == nil {
			defer bad.Close()
			_, err = bad.Do(ctx, "PING")
		}
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "wrongpass") {
			t.Fatalf("the ACL user with a wrong password: %v, want WRONGPASS", err)
		}
	})

	t.Run("DB", func(t *testing.T) {
		d3, err := open(drivers.Options{Endpoint: drivers.Endpoint{Addr: srv.Addr, Password: srv.Password, DB: 3}})
		if err != nil {
			t.Fatal(err)
		}
		defer d3.Close()
		mustDo(t, d3, "SET", "dt:db3", "x")
		if r := mustDo(t, d, "EXISTS", "dt:db3"); r.Int != 0 {
			t.Fatal("a key written with DB 3 is visible in database 0")
		}
		if r := mustDo(t, d3, "EXISTS", "dt:db3"); r.Int != 1 {
			t.Fatal("a key written with DB 3 is not there")
		}
		mustDo(t, d3, "FLUSHDB")
	})

	t.Run("TLS", func(t *testing.T) {
		runTLS(t, open)
	})

	t.Run("Unreachable", func(t *testing.T) {
		start := time.Now()
		bad, err := open(drivers.Options{Endpoint: drivers.Endpoint{Addr: "127.0.0.1:1"}, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
		if err == nil {
			defer bad.Close()
			_, err = bad.Do(ctx, "PING")
		}
		if err == nil {
			t.Fatal("PING to 127.0.0.1:1 succeeded")
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("unreachable server took %v to fail", time.Since(start))
		}
		if k := drivers.ErrorKind(err); k != "connection" {
			t.Logf("error kind %q for %v", k, err)
		}
	})
}

func mustDo(t *testing.T, d drivers.Driver, args ...string) drivers.Reply {
	t.Helper()
	r, err := d.Do(context.Background(), args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return r
}

// runTLS starts a TLS redis-server that demands client certificates and
// checks that the adapter connects with the CA and a client certificate,
// and fails without the client certificate or with another CA (unless
// verification is skipped).
func runTLS(t *testing.T, open Open) {
	ctx := context.Background()
	files, err := topology.NewTLSFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other, err := topology.NewTLSFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	topo, addr, err := topology.StartTLS(ctx, files, true)
	if err != nil {
		t.Fatalf("start a TLS redis-server: %v", err)
	}
	defer topo.Stop()
	pw := topo.Servers[0].Password
	pool := func(path string) *x509.CertPool {
		pem, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		p := x509.NewCertPool()
		if !p.AppendCertsFromPEM(pem) {
			t.Fatalf("no certificate in %s", path)
		}
		return p
	}
	cert, err := tls.LoadX509KeyPair(files.ClientCert, files.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	try := func(cfg *tls.Config) error {
		c, err := open(drivers.Options{Endpoint: drivers.Endpoint{Addr: addr, Password: pw, TLS: cfg}, DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second})
		if err != nil {
			return err
		}
		defer c.Close()
		if ok, err := c.SetNX(ctx, "dt:tls", "v", time.Second); err != nil {
			return err
		} else if !ok {
			return errors.New("SET NX on a fresh key returned false")
		}
		_, err = c.Do(ctx, "DEL", "dt:tls")
		return err
	}
	if err := try(&tls.Config{RootCAs: pool(files.CA), Certificates: []tls.Certificate{cert}}); err != nil {
		t.Fatalf("TLS with the right CA and a client certificate: %v", err)
	}
	if err := try(&tls.Config{RootCAs: pool(files.CA)}); err == nil {
		t.Fatal("TLS without the client certificate the server demands succeeded")
	}
	err = try(&tls.Config{RootCAs: pool(other.CA), Certificates: []tls.Certificate{cert}})
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("TLS with another CA: %v, want a certificate verification error", err)
	}
	if err := try(&tls.Config{RootCAs: pool(other.CA), Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true}); err != nil {
		t.Fatalf("TLS with another CA and InsecureSkipVerify: %v", err)
	}
	if err := try(nil); err == nil {
		t.Fatal("plain TCP to the TLS port succeeded")
	}
}
