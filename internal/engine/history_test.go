package engine_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/history"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/workloads"
)

// A scenario run with a History writes every critical section under the
// result's key, with the server clock's offset. Taking each client as a
// process of its own, Count finds no overlap for atomic (a safe lock's
// recorded sections never overlap) and some for naive with a lease
// shorter than its work.
func TestHistoryRecordsSections(t *testing.T) {
	for _, c := range []struct {
		strategy  string
		ttl, work time.Duration
		overlaps  bool
	}{
		{"atomic", 5 * time.Second, time.Millisecond, false},
		{"naive", 10 * time.Millisecond, 30 * time.Millisecond, true},
	} {
		t.Run(c.strategy, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "h.history.jsonl.gz")
			w := history.NewWriter(path, history.Header{RunID: "t"})
			sc := engine.Scenario{Spec: engine.Spec{
				Strategy: c.strategy, Driver: "rueidis", Workload: "flash-sale",
				Retry: policy(t, "fixed:interval=1ms"), Clients: 6,
				Duration: 30 * time.Second, TTL: c.ttl, AcquireTimeout: 20 * time.Second,
				Params: workloads.Params{Work: workloads.Fixed(c.work)}, Options: registry.Values{"stock": int64(60), "skus": 1}, Seed: 1,
			}, Env: engine.Env{History: w, Number: 3}}
			res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:"+t.Name()+":")
			if err != nil {
				t.Fatal(err)
			}
			f, err := history.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Scenarios) != 1 {
				t.Fatalf("%d scenarios in the history", len(f.Scenarios))
			}
			s := f.Scenarios[0]
			if s.Key != res.Key() || s.Number != 3 || !s.Measured || s.UncertaintyNS <= 0 || s.UncertaintyNS > int64(time.Second) {
				t.Fatalf("scenario record %+v (key want %q)", s, res.Key())
			}
			if n := int64(len(s.Entries)); n < res.Figures["sold"] || res.Figures["sold"] == 0 {
				t.Fatalf("%d sections for %d sold", n, res.Figures["sold"])
			}
			perClient := map[int32]*history.Scenario{}
			for _, e := range s.Entries {
				if e.Leave < e.Enter || e.Token == 0 {
					t.Fatalf("entry %+v", e)
				}
				if perClient[e.Client] == nil {
					perClient[e.Client] = &history.Scenario{Key: s.Key}
				}
				perClient[e.Client].Entries = append(perClient[e.Client].Entries, e)
			}
			var parts []history.Part
			for id, cs := range perClient {
				h := f.Header
				h.Proc = "client-" + strconv.Itoa(int(id))
				parts = append(parts, history.Part{Header: h, Scenarios: []*history.Scenario{cs}})
			}
			cnt, err := history.Count(parts)
			if err != nil {
				t.Fatal(err)
			}
			if got := cnt.Certain+cnt.Possible > 0; got != c.overlaps {
				t.Fatalf("%s: %+v between clients, want overlaps %v", c.strategy, cnt, c.overlaps)
			}
		})
	}
}
