package harness

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/internal/topology/topotest"
)

// BareHandover on a real redis-server, on both drivers: one turn at a time
// (the holds fit in the window: efficiency at most 1), each hold at least
// the sleep, and the subscription gone after it returns (PUBSUB NUMPAT 0 within 5 s).
// A ring of fewer than 2 is refused.
func TestBareHandover(t *testing.T) {
	s := topotest.Start(t)
	if _, _, err := BareHandover(context.Background(), "goredis", s.Addr, s.Password, 1, time.Millisecond, time.Second); err == nil ||
		!strings.Contains(err.Error(), "want at least 2") {
		t.Fatalf("1 client: err %v, want the at-least-2 error", err)
	}
	const hold = 2 * time.Millisecond
	for _, drv := range drivers.Names() {
		rate, meanUS, err := BareHandover(context.Background(), drv, s.Addr, s.Password, 3, hold, 400*time.Millisecond)
		if err != nil {
			t.Fatalf("%s: %v", drv, err)
		}
		if meanUS < float64(hold.Microseconds()) {
			t.Errorf("%s: mean hold %.0f µs, below the %v sleep", drv, meanUS, hold)
		}
		if eff := rate * meanUS / 1e6; eff <= 0 || eff > 1 {
			t.Errorf("%s: %.1f hand-overs/s x %.0f µs = efficiency %.3f, want in (0, 1]", drv, rate, meanUS, eff)
		}
		// The server drops the subscription when it reads the closed
		// connection, which may come after this command: wait up to 5 s.
		var n string
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if n, err = topology.Command(s.Addr, s.Password, 2*time.Second, "PUBSUB", "NUMPAT"); err != nil {
				t.Fatal(err)
			}
			if n == "0" || time.Now().After(deadline) {
				break
			}
		}
		if n != "0" {
			t.Errorf("%s: PUBSUB NUMPAT %s 5 s after the run, want 0", drv, n)
		}
	}
}
