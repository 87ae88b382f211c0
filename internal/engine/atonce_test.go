package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/report"
)

// atOnce runs the scenarios at once on the package's server, the i-th
// under the key prefix prefixes[i] (each its own, so that no run sees
// another's keys), and returns each run's result and how long its
// engine.Run took; it fails the test on a run's error once all have
// ended. Two runs that need not wait for each other (a defective lock and
// the correct one it is shown against) then take the longest's time
// rather than their sum.
func atOnce(t *testing.T, prefixes []string, scs ...engine.Scenario) ([]report.Scenario, []time.Duration) {
	t.Helper()
	res := make([]report.Scenario, len(scs))
	took := make([]time.Duration, len(scs))
	errs := make([]error, len(scs))
	var wg sync.WaitGroup
	for i, sc := range scs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			res[i], errs[i] = engine.Run(context.Background(), sc, nodes, prefixes[i])
			took[i] = time.Since(start)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", scs[i].Strategy, err)
		}
	}
	return res, took
}
