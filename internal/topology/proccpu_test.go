package topology

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Since is the CPU between two reads of one process; reads of two
// processes (a restart in between: another pid or start time) give none.
func TestProcCPUSince(t *testing.T) {
	before := ProcCPU{Pid: 10, Start: 500, MS: 120}
	if d, ok := (ProcCPU{Pid: 10, Start: 500, MS: 250}).Since(before); !ok || d != 130 {
		t.Fatalf("same process: %v %v, want 130 true", d, ok)
	}
	for _, after := range []ProcCPU{{Pid: 11, Start: 500, MS: 250}, {Pid: 10, Start: 900, MS: 250}, {}, {Pid: 10, Start: 500, MS: 100}} {
		if d, ok := after.Since(before); ok {
			t.Errorf("%+v since %+v: %v, want none", after, before, d)
		}
	}
}

// A started server's process CPU reads (from its pid), and grows; a
// stopped one's is ErrNoProcess, as is a server never started.
func TestServerCPU(t *testing.T) {
	if _, err := (&Server{}).CPU(); !errors.Is(err, ErrNoProcess) {
		t.Fatalf("no process: %v, want ErrNoProcess", err)
	}
	if !HaveEtcd() {
		t.Skip("etcd is not installed: apt-get install etcd-server (make test does it as root)")
	}
	s, err := StartEtcd(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	a, err := s.CPU()
	if err != nil {
		t.Fatal(err)
	}
	if a.Pid != s.Pid || a.Start == 0 || a.MS <= 0 {
		t.Fatalf("%+v: want pid %d, a start time and some CPU (etcd started and enabled authentication)", a, s.Pid)
	}
	for range 50 { // some work for etcd
		if err := etcdHealth(s.Addr, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	b, err := s.CPU()
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := b.Since(a); !ok || d < 0 {
		t.Fatalf("%+v since %+v: %v %v", b, a, d, ok)
	}
	s.Stop()
	if _, err := s.CPU(); !errors.Is(err, ErrNoProcess) {
		t.Fatalf("after Stop: %v, want ErrNoProcess", err)
	}
}
