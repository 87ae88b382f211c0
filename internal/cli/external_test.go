package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
)

// The runs here use a 5 s lease: on a loaded machine a 100 ms lease can
// run out while a holder waits for a CPU, which is a true overlap but not
// what these tests are about.

// checkRun asserts that a run exited 0 and wrote want scenarios on the
// external layout named topo, each selling exactly stock with no
// violation, and that secrets appear nowhere in its output or file.
func checkRun(t *testing.T, r result, out, topo string, want int, stock int64, secrets ...string) *report.Run {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if run.Meta.Topology != topo {
		t.Errorf("meta.topology = %q, want %q", run.Meta.Topology, topo)
	}
	if len(run.Scenarios) != want {
		t.Fatalf("%d scenarios, want %d", len(run.Scenarios), want)
	}
	for _, sc := range run.Scenarios {
		v := sc.Violations
		if sc.Ops != stock || v.Oversell != 0 || v.Overlap != 0 || v.LostUpdates != 0 {
			t.Errorf("%s/%s: ops %d (want %d), oversell %d, overlap %d, lost updates %d", sc.Strategy, sc.Driver, sc.Ops, stock, v.Oversell, v.Overlap, v.LostUpdates)
		}
	}
	raw, _ := os.ReadFile(out)
	for _, s := range secrets {
		for what, text := range map[string]string{"stdout": r.stdout, "stderr": r.stderr, "result file": string(raw)} {
			if strings.Contains(text, s) {
				t.Errorf("%s shows the secret %q", what, s)
			}
		}
	}
	return run
}

// dbsize is the key count of the server at addr.
func dbsize(t *testing.T, addr, pw string) string {
	t.Helper()
	v, err := topology.Command(addr, pw, time.Second, "DBSIZE")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// rediss:// with the right CA and a client certificate runs on both
// drivers; another CA fails with exit 1 naming the address and what to do;
// --tls-insecure-skip-verify then connects; a missing client certificate
// fails.
func TestExternalTLS(t *testing.T) {
	t.Parallel()
	files, err := topology.NewTLSFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other, err := topology.NewTLSFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	topo, tlsAddr, err := topology.StartTLS(context.Background(), files, true)
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Stop()
	s := topo.Servers[0]
	out := filepath.Join(t.TempDir(), "tls.json")
	url := "rediss://:" + s.Password + "@" + tlsAddr
	base := []string{"run", "-q", "--addr", url, "--strategy", "atomic", "--stock", "20", "--ttl", "5s", "--clients", "4",
		"--retry", "fixed:interval=2ms", "--force", "--out", out, "--tls-cert-file", files.ClientCert, "--tls-key-file", files.ClientKey}

	r := lockbench(t, append(base, "--tls-ca-file", files.CA)...)
	checkRun(t, r, out, "external", 2, 20, s.Password)
	if n := dbsize(t, s.Addr, s.Password); n != "0" {
		t.Errorf("DBSIZE after the run = %s, want 0 (the run's keys deleted)", n)
	}

	for _, drv := range []string{"goredis", "rueidis"} {
		r = lockbench(t, append(base, "--tls-ca-file", other.CA, "--driver", drv)...)
		if r.code != exitFailure || !strings.Contains(r.stderr, tlsAddr) || !strings.Contains(r.stderr, "certificate") ||
			!strings.Contains(r.stderr, "--tls-ca-file") {
			t.Errorf("%s, another CA: exit %d, want 1 with the address, the certificate error and a hint\n%s", drv, r.code, r.stderr)
		}
		if strings.Contains(r.stderr, s.Password) {
			t.Error("the password appears in the error output")
		}
		r = lockbench(t, append(base, "--tls-ca-file", other.CA, "--tls-insecure-skip-verify", "--driver", drv)...)
		checkRun(t, r, out, "external", 1, 20, s.Password)
	}

	// The latency fault's proxy stands between client and server; TLS runs
	// through it (the certificate checked against the server's name).
	r = lockbench(t, append(base, "--tls-ca-file", files.CA, "--driver", "rueidis", "--fault", "latency:delay=1ms,at=0s")...)
	run := checkRun(t, r, out, "external", 1, 20, s.Password)
	if len(run.Scenarios[0].Faults) != 1 {
		t.Errorf("latency through TLS: fault windows %+v, want 1", run.Scenarios[0].Faults)
	}

	// Without the client certificate the server demands.
	r = lockbench(t, "run", "-q", "--addr", url, "--tls-ca-file", files.CA, "--strategy", "atomic", "--driver", "rueidis", "--force", "--out", out)
	if r.code != exitFailure || !strings.Contains(r.stderr, tlsAddr) {
		t.Errorf("no client certificate: exit %d, want 1 naming %s\n%s", r.code, tlsAddr, r.stderr)
	}
	// host:port with --tls is the same as rediss://.
	r = lockbench(t, append([]string{"run", "-q", "--addr", tlsAddr, "--tls", "--password", s.Password, "--tls-ca-file", files.CA},
		base[4:]...)...)
	checkRun(t, r, out, "external", 2, 20, s.Password)
}

// An ACL user allowed only lockbench:* keys (and any pub/sub channel: an
// ACL matches PSUBSCRIBE patterns literally) and no FLUSHDB or FLUSHALL
// runs three strategies with two retry policies on both drivers:
// lockbench touches no other key (the server would refuse it with
// NOPERM), refuses a database with someone else's key unless
// --allow-nonempty, and never prints the user or its password.
func TestExternalACLUser(t *testing.T) {
	t.Parallel()
	s := oneServer(t)
	const user, pw = "acl-user-7f3a", "acl-pass-91c2e"
	if _, err := topology.Command(s.Addr, s.Password, time.Second, "ACL", "SETUSER", user, "on", ">"+pw,
		"~lockbench:*", "allchannels", "+@all", "-flushdb", "-flushall"); err != nil {
		t.Fatal(err)
	}
	if _, err := topology.Command(s.Addr, s.Password, time.Second, "SET", "user:data", "precious"); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "acl.json")
	args := []string{"run", "-q", "--addr", "redis://" + user + ":" + pw + "@" + s.Addr, "--strategy", "atomic,watchdog,reentrant",
		"--stock", "20", "--ttl", "5s", "--clients", "4", "--retry", "fixed:interval=2ms,pubsub", "--force", "--out", out}
	r := lockbench(t, args...)
	if r.code != exitUsage || !strings.Contains(r.stderr, "already holds 1 key;") {
		t.Fatalf("non-empty db: exit %d, want 2\n%s", r.code, r.stderr)
	}
	r = lockbench(t, append(args, "--allow-nonempty")...)
	checkRun(t, r, out, "external", 3*2*2, 20, user, pw)
	if v, _ := topology.Command(s.Addr, s.Password, time.Second, "GET", "user:data"); v != "precious" || dbsize(t, s.Addr, s.Password) != "1" {
		t.Errorf("after the run: user key %q, DBSIZE %s; want it untouched and nothing else", v, dbsize(t, s.Addr, s.Password))
	}
	// The same with --username and --password.
	r = lockbench(t, "run", "-q", "--addr", s.Addr, "--username", user, "--password", pw, "--allow-nonempty",
		"--strategy", "atomic", "--stock", "20", "--ttl", "5s", "--clients", "4", "--retry", "fixed:interval=2ms", "--force", "--out", out)
	checkRun(t, r, out, "external", 2, 20, user, pw)
	// A wrong password for the user: exit 1 naming the address.
	r = lockbench(t, "run", "-q", "--addr", s.Addr, "--username", user, "--password", "wrong-pw-x", "--allow-nonempty",
		"--strategy", "atomic", "--force", "--out", out)
	if r.code != exitFailure || !strings.Contains(r.stderr, s.Addr) || !strings.Contains(strings.ToUpper(r.stderr), "WRONGPASS") {
		t.Errorf("wrong password: exit %d, want 1 with WRONGPASS and the address\n%s", r.code, r.stderr)
	}
}

// --cluster: the addresses are Cluster nodes; both drivers run in cluster
// mode, a key on any master counts as a database in use, and every key of
// the run is gone afterwards.
func TestExternalCluster(t *testing.T) {
	t.Parallel()
	topo, err := topology.StartCluster(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Stop()
	pw := topo.Servers[0].Password
	// Someone else's key, on whichever master owns its slot.
	stored := ""
	for _, s := range topo.Servers {
		if _, err := topology.Command(s.Addr, pw, time.Second, "SET", "user:data", "precious"); err == nil {
			stored = s.Addr
			break
		}
	}
	if stored == "" {
		t.Fatal("no cluster node took user:data")
	}
	out := filepath.Join(t.TempDir(), "cluster.json")
	args := []string{"run", "-q", "--addr", strings.Join(topo.Addrs(), ","), "--cluster", "--password", pw,
		"--strategy", "atomic,watchdog", "--stock", "20", "--ttl", "5s", "--clients", "4", "--retry", "fixed:interval=2ms", "--out", out}
	r := lockbench(t, args...)
	if r.code != exitUsage || !strings.Contains(r.stderr, "already holds 1 key;") {
		t.Fatalf("a cluster with a key on %s: exit %d, want 2\n%s", stored, r.code, r.stderr)
	}
	r = lockbench(t, append(args, "--allow-nonempty")...)
	checkRun(t, r, out, "external-cluster", 4, 20, pw)
	for _, s := range topo.Servers {
		want := "0"
		if s.Addr == stored {
			want = "1"
		}
		if n := dbsize(t, s.Addr, pw); n != want {
			t.Errorf("DBSIZE on %s after the run = %s, want %s", s.Addr, n, want)
		}
	}
}

// --sentinel-master: the addresses are Sentinels; both drivers find the
// master through them, wait-replicas finds its replica (the check that
// refuses a master without one passes), and the run's keys are gone
// afterwards.
func TestExternalSentinel(t *testing.T) {
	t.Parallel()
	topo, err := topology.StartSentinel(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Stop()
	m := topo.Servers[0]
	// The Sentinels lockbench starts have a password of their own:
	// --sentinel-password.
	spw := topo.SentinelPassword()
	out := filepath.Join(t.TempDir(), "sentinel.json")
	r := lockbench(t, "run", "-q", "--addr", strings.Join(topo.SentinelAddrs(), ","), "--sentinel-master", topology.MasterName,
		"--password", m.Password, "--sentinel-password", spw, "--strategy", "atomic,wait-replicas", "--stock", "20", "--ttl", "5s", "--clients", "4",
		"--retry", "fixed:interval=2ms", "--out", out)
	run := checkRun(t, r, out, "external-sentinel", 4, 20, m.Password, spw)
	for _, sc := range run.Scenarios {
		if sc.Topology != "external-sentinel" {
			t.Errorf("%s/%s: topology %q", sc.Strategy, sc.Driver, sc.Topology)
		}
	}
	if n := dbsize(t, m.Addr, m.Password); n != "0" {
		t.Errorf("DBSIZE on the master after the run = %s, want 0", n)
	}
	// Without --sentinel-password, or with the master's password in its
	// place: exit 1 naming the master, on both drivers.
	sargs := []string{"run", "-q", "--addr", strings.Join(topo.SentinelAddrs(), ","), "--sentinel-master", topology.MasterName,
		"--password", m.Password, "--strategy", "atomic", "--stock", "20", "--ttl", "5s", "--clients", "4", "--retry", "fixed:interval=2ms", "--force", "--out", out}
	for _, drv := range []string{"goredis", "rueidis"} {
		for _, extra := range [][]string{nil, {"--sentinel-password", m.Password}} {
			r = lockbench(t, append(append(sargs, "--driver", drv), extra...)...)
			if r.code != exitFailure || !strings.Contains(r.stderr, topology.MasterName) {
				t.Errorf("%s %v: Sentinels with a password, none or a wrong one given: exit %d, want 1 naming the master\n%s", drv, extra, r.code, r.stderr)
			}
		}
	}

	// A master name the Sentinels do not know: exit 1 naming it.
	r = lockbench(t, "run", "-q", "--addr", topo.SentinelAddrs()[0], "--sentinel-master", "nosuchmaster",
		"--password", m.Password, "--sentinel-password", spw, "--strategy", "atomic", "--driver", "rueidis", "--force", "--out", out)
	if r.code != exitFailure || !strings.Contains(r.stderr, "nosuchmaster") {
		t.Errorf("unknown master: exit %d, want 1 naming it\n%s", r.code, r.stderr)
	}
}

func TestExternalUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "x.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--addr", "rediss://:pw@127.0.0.1:1,redis://:pw@127.0.0.1:2"}, []string{"mixes redis:// and rediss://"}},
		{[]string{"--addr", "redis://u:p@127.0.0.1:1,redis://v:p@127.0.0.1:2"}, []string{"two different usernames"}},
		{[]string{"--addr", "redis://127.0.0.1:1/x"}, []string{"database number"}},
		{[]string{"--addr", "redis://127.0.0.1:1?tls=1"}, []string{"query parameters"}},
		{[]string{"--addr", "redis://127.0.0.1:1/2", "--cluster"}, []string{"only database 0"}},
		{[]string{"--addr", "127.0.0.1:1", "--tls-ca-file", "ca.pem"}, []string{"--tls-ca-file goes with TLS"}},
		{[]string{"--addr", "127.0.0.1:1", "--tls", "--tls-ca-file", filepath.Join(dir, "missing.pem")}, []string{"--tls-ca-file", "missing.pem"}},
		{[]string{"--addr", "127.0.0.1:1", "--tls", "--tls-ca-file", notPEM}, []string{"holds no PEM certificate"}},
		{[]string{"--addr", "127.0.0.1:1", "--tls", "--tls-cert-file", notPEM}, []string{"go together"}},
		{[]string{"--addr", "rediss://127.0.0.1:1", "--tls-cert-file", notPEM, "--tls-key-file", notPEM}, []string{"--tls-cert-file/--tls-key-file"}},
		{[]string{"--cluster"}, []string{"--cluster goes with --addr"}},
		{[]string{"--username", "u"}, []string{"--username goes with --addr"}},
		{[]string{"--tls"}, []string{"--tls goes with --addr"}},
		{[]string{"--sentinel-master", "m"}, []string{"--sentinel-master goes with --addr"}},
		{[]string{"--addr", "127.0.0.1:1", "--sentinel-password", "p"}, []string{"--sentinel-password goes with --sentinel-master"}},
		{[]string{"--addr", "127.0.0.1:1", "--cluster", "--sentinel-master", "m"}, []string{"exclude each other"}},
		{[]string{"--addr", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3", "--cluster", "--strategy", "redlock"}, []string{"redlock needs independent masters"}},
		{[]string{"--addr", "127.0.0.1:1", "--cluster", "--strategy", "wait-replicas"}, []string{"cannot run on a Cluster"}},
		{[]string{"--addr", "127.0.0.1:1", "--sentinel-master", "m", "--fault", "latency"}, []string{"fault latency"}},
	}
	for _, c := range cases {
		r := lockbench(t, append([]string{"run", "--out", filepath.Join(dir, "u.json")}, c.args...)...)
		if r.code != exitUsage {
			t.Errorf("lockbench %v: exit %d, want 2\n%s", c.args, r.code, r.stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("lockbench %v: stderr lacks %q:\n%s", c.args, w, r.stderr)
			}
		}
	}
	// A password or user name never shows, even in an address that does
	// not parse.
	r := lockbench(t, "run", "--addr", "redis://someuser:s3cr3t-pw@host:notaport")
	if r.code != exitUsage || strings.Contains(r.stderr, "s3cr3t-pw") || strings.Contains(r.stderr, "someuser") {
		t.Errorf("unparsable URL: exit %d, stderr shows a secret or is not a usage error:\n%s", r.code, r.stderr)
	}
}
