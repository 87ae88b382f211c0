package topology

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// loopbackOnly checks that addr's port is not reachable on this host's
// other addresses (the server bound 127.0.0.1 only). A host with no
// address besides loopback has nothing to check.
func loopbackOnly(t *testing.T, addr string) {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range ifaddrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.IsLoopback() || ipn.IP.IsLinkLocalUnicast() {
			continue
		}
		other := net.JoinHostPort(ipn.IP.String(), port)
		if c, err := net.DialTimeout("tcp", other, 300*time.Millisecond); err == nil {
			c.Close()
			t.Errorf("%s also listens on %s: want 127.0.0.1 only", addr, other)
		}
	}
}

// wantNoAuth expects a command without AUTH to be refused with NOAUTH.
func wantNoAuth(t *testing.T, addr string, args ...string) {
	t.Helper()
	if out, err := Command(addr, "", time.Second, args...); err == nil || !strings.HasPrefix(err.Error(), "NOAUTH") {
		t.Errorf("%s %v without AUTH: %q, %v; want NOAUTH", addr, args, out, err)
	}
}

// Every redis-server lockbench starts (standalone, masters, the replica,
// Cluster nodes) binds 127.0.0.1 only and refuses a client that has not
// authenticated; with the password it answers. A restarted replica keeps
// the pair's password.
func TestRedisRefusesUnauthenticated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	check := func(t *testing.T, servers []*Server) {
		t.Helper()
		for _, s := range servers {
			if len(s.Password) != 32 {
				t.Errorf("%s: password %q, want 32 random hex characters", s.Addr, s.Password)
			}
			wantNoAuth(t, s.Addr, "PING")
			wantNoAuth(t, s.Addr, "SET", "x", "1")
			if err := Ping(s.Addr, s.Password, time.Second); err != nil {
				t.Errorf("%s: PING with AUTH: %v", s.Addr, err)
			}
			if err := Ping(s.Addr, "wrong", time.Second); err == nil {
				t.Errorf("%s: AUTH with a wrong password accepted", s.Addr)
			}
			loopbackOnly(t, s.Addr)
			listensOnLoopbackOnly(t, s.Pid)
		}
	}
	t.Run("masters", func(t *testing.T) {
		topo, err := Start(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		defer topo.Stop()
		check(t, topo.Servers)
		if topo.Servers[0].Password == topo.Servers[1].Password {
			t.Error("two independent masters share a password")
		}
	})
	t.Run("replicated", func(t *testing.T) {
		topo, err := StartReplicated(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer topo.Stop()
		check(t, topo.Servers)
		r := topo.Servers[1]
		if err := r.Restart(ctx, 0); err != nil {
			t.Fatalf("restart the replica: %v", err)
		}
		check(t, topo.Servers[1:])
		if err := waitLinked(ctx, r, 10*time.Second); err != nil {
			t.Fatalf("restarted replica (masterauth): %v", err)
		}
	})
	t.Run("cluster", func(t *testing.T) {
		topo, err := StartCluster(ctx, 3)
		if err != nil {
			t.Fatal(err)
		}
		defer topo.Stop()
		check(t, topo.Servers)
		for _, bus := range topo.busPorts {
			loopbackOnly(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(bus)))
		}
	})
}

// The Sentinels lockbench starts have a password of their own: SENTINEL
// FAILOVER (or any command) without AUTH is refused, and the failover is
// not started; with the password they answer, and they see each other and
// the replica (they authenticate to each other and to the master).
func TestSentinelRefusesUnauthenticated(t *testing.T) {
	t.Parallel()
	topo, err := StartSentinel(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Stop()
	spw := topo.SentinelPassword()
	if len(spw) != 32 || spw == topo.Servers[0].Password {
		t.Fatalf("Sentinel password %q: want 32 random hex characters, not the master's", spw)
	}
	for _, s := range topo.Sentinels {
		if s.Password != spw {
			t.Errorf("sentinel %s: password %q, want the layout's %q", s.Addr, s.Password, spw)
		}
		wantNoAuth(t, s.Addr, "SENTINEL", "FAILOVER", MasterName)
		wantNoAuth(t, s.Addr, "PING")
		wantNoAuth(t, s.Addr, "INFO", "sentinel")
		if _, err := Command(s.Addr, topo.Servers[0].Password, time.Second, "PING"); err == nil {
			t.Errorf("sentinel %s accepts the master's password", s.Addr)
		}
		info, err := Command(s.Addr, spw, time.Second, "INFO", "sentinel")
		if err != nil || !strings.Contains(info, "address="+topo.Servers[0].Addr) || !strings.Contains(info, "sentinels=3") {
			t.Errorf("sentinel %s with AUTH: %q, %v", s.Addr, info, err)
		}
		loopbackOnly(t, s.Addr)
		listensOnLoopbackOnly(t, s.Pid)
	}
	// The refused FAILOVER did nothing: the master is still the master.
	time.Sleep(500 * time.Millisecond)
	info, err := Command(topo.Servers[0].Addr, topo.Servers[0].Password, time.Second, "INFO", "replication")
	if err != nil || !strings.Contains(info, "role:master") {
		t.Errorf("master after the refused failovers: %q, %v", info, err)
	}
}

// The etcd lockbench starts has authentication on: a put, a range, a
// delete, a transaction, a user add or list or auth disable without a token is refused, so is a login with a wrong
// password; root's password gets a token with which the put works. Both
// its URLs bind 127.0.0.1 only. It fails, not skips, when etcd is
// installed but does not start.
func TestEtcdRefusesUnauthenticated(t *testing.T) {
	t.Parallel()
	if !HaveEtcd() {
		t.Skip("etcd is not installed: apt-get install etcd-server (make test does it as root)")
	}
	ctx := context.Background()
	s, err := StartEtcd(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if len(s.Password) != 32 {
		t.Fatalf("password %q, want 32 random hex characters", s.Password)
	}
	put := `{"key":"bG9ja2JlbmNoL3g=","value":"MQ=="}` // lockbench/x = 1
	for _, c := range []struct{ path, body string }{
		{"/v3/kv/put", put},
		{"/v3/kv/range", `{"key":"bG9ja2JlbmNoL3g="}`},
		// Not /v3/lease/grant: etcd 3.4 grants a lease without a token
		// (a lease alone holds no key; attaching one needs the token).
		{"/v3/kv/put", `{"key":"bG9ja2JlbmNoL3k=","value":"MQ==","lease":"1"}`},
		{"/v3/kv/deleterange", `{"key":"bG9ja2JlbmNoL3g="}`},
		{"/v3/kv/txn", `{"success":[{"requestPut":{"key":"bG9ja2JlbmNoL3g=","value":"Mg=="}}]}`},
		{"/v3/auth/user/list", `{}`},
		{"/v3/auth/user/add", `{"name":"intruder","password":"x"}`},
		{"/v3/auth/disable", `{}`},
	} {
		out, err := etcdPost(ctx, s.Addr, "", c.path, c.body)
		if err == nil || !strings.Contains(err.Error(), "user name is empty") {
			t.Errorf("%s without a token: %q, %v; want refused: user name is empty", c.path, out, err)
		}
	}
	if out, err := etcdPost(ctx, s.Addr, "", "/v3/auth/authenticate", `{"name":"root","password":"wrong"}`); err == nil {
		t.Errorf("login with a wrong password: %s", out)
	}
	out, err := etcdPost(ctx, s.Addr, "", "/v3/auth/authenticate", `{"name":"`+EtcdUser+`","password":"`+s.Password+`"}`)
	if err != nil {
		t.Fatalf("login as %s: %v", EtcdUser, err)
	}
	i := strings.Index(out, `"token":"`)
	if i < 0 {
		t.Fatalf("no token in %s", out)
	}
	token := out[i+len(`"token":"`):]
	token = token[:strings.IndexByte(token, '"')]
	if _, err := etcdPost(ctx, s.Addr, token, "/v3/kv/put", put); err != nil {
		t.Errorf("put with root's token: %v", err)
	}
	if err := etcdHealth(s.Addr, time.Second); err != nil {
		t.Errorf("health with authentication on: %v", err)
	}
	loopbackOnly(t, s.Addr)
	if n := listensOnLoopbackOnly(t, s.Pid); n != 2 {
		t.Errorf("etcd listens on %d sockets, want 2 (clients, peers)", n)
	}
	for i, a := range s.args {
		if a == "--listen-peer-urls" {
			peer := strings.TrimPrefix(s.args[i+1], "http://")
			if !strings.HasPrefix(peer, "127.0.0.1:") {
				t.Errorf("peer URL %s, want 127.0.0.1", s.args[i+1])
			}
			loopbackOnly(t, peer)
		}
	}
}

// listensOnLoopbackOnly checks every listening TCP socket of process pid
// (its fds, matched by inode in /proc/net/tcp and tcp6): each is on
// 127.0.0.1 (an IPv4-mapped one on an IPv6 socket included). It returns
// how many there are.
func listensOnLoopbackOnly(t *testing.T, pid int) int {
	t.Helper()
	fds, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if err != nil {
		t.Fatal(err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	n := 0
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] { // 0A: LISTEN
				continue
			}
			n++
			host := f[1][:strings.IndexByte(f[1], ':')]
			if host != "0100007F" && host != "0000000000000000FFFF00000100007F" {
				t.Errorf("pid %d listens on %s (%s): want 127.0.0.1 only", pid, f[1], table)
			}
		}
	}
	if n == 0 {
		t.Errorf("pid %d has no listening socket", pid)
	}
	return n
}
