package topology

import (
	"context"
	"os"
	"testing"
	"time"
)

// Each baseline server starts on loopback, answers its readiness check,
// listens on 127.0.0.1 only and on no port beyond its own, and is gone with its directory after Stop; KillAll ends one too.
func TestBackendsStartAndStop(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		have  func() bool
		pkg   string
		start func(context.Context) (*Server, error)
		check func(*Server) error
	}{
		{"mariadb", HaveMariaDB, "mariadb-server", StartMariaDB, func(s *Server) error { return mysqlGreeting(s.Addr, time.Second) }},
		{"zookeeper", HaveZooKeeper, "zookeeper", StartZooKeeper, func(s *Server) error { return fourLetter(s.Addr, "ruok", "imok", time.Second) }},
		{"etcd", HaveEtcd, "etcd-server", StartEtcd, func(s *Server) error { return etcdHealth(s.Addr, time.Second) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !c.have() {
				t.Skipf("%s is not installed: apt-get install %s (make test does it as root)", c.name, c.pkg)
			}
			s, err := c.start(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !Alive(s.Pid) {
				t.Fatalf("pid %d not alive", s.Pid)
			}
			if err := c.check(s); err != nil {
				t.Fatalf("ready check after start: %v", err)
			}
			// One listening port (two for etcd: clients and peers), on
			// 127.0.0.1: no admin server, no other interface.
			want := 1
			if c.name == "etcd" {
				want = 2
			}
			if n := listensOnLoopbackOnly(t, s.Pid); n != want {
				t.Errorf("%s listens on %d sockets, want %d", c.name, n, want)
			}
			s.Stop()
			s.Stop() // idempotent
			if Alive(s.Pid) {
				t.Errorf("pid %d alive after Stop", s.Pid)
			}
			if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
				t.Errorf("dir %s not removed: %v", s.Dir, err)
			}
			if err := c.check(s); err == nil {
				t.Errorf("%s still answers after Stop", s.Addr)
			}
		})
	}
}

func TestBackendKillAll(t *testing.T) {
	if !HaveEtcd() {
		t.Skip("etcd is not installed: apt-get install etcd-server (make test does it as root)")
	}
	s, err := StartEtcd(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	KillAll()
	if Alive(s.Pid) {
		t.Fatalf("etcd pid %d alive after KillAll", s.Pid)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Errorf("dir %s not removed: %v", s.Dir, err)
	}
}
