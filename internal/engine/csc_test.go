package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/workloads"
)

// The csc retry policy on rueidis: atomic and fair (the release SETs the
// queue head's wake key, whose invalidation wakes that waiter alone) sell the stock exactly with no
// violation and no acquire timeout, and nothing is PUBLISHed. The
// fallback wait is the 5 s lease TTL; a run whose waiters were never
// woken would spend it between attempts, so no acquire waiting half of
// it shows they were woken by invalidations. On goredis the scenario is
// refused before anything starts.
func TestCSCRetry(t *testing.T) {
	for _, strat := range []string{"atomic", "fair"} {
		t.Run(strat, func(t *testing.T) {
			sc := engine.Scenario{Spec: engine.Spec{
				Strategy: strat, Driver: "rueidis", Workload: "flash-sale", Retry: policy(t, "csc"),
				Clients: 10, Duration: 60 * time.Second, TTL: 5 * time.Second, AcquireTimeout: 50 * time.Second,
				Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"stock": int64(60), "skus": 1}, Seed: 3,
			}}
			prefix := "lockbench:test:" + t.Name() + ":"
			res, err := engine.Run(context.Background(), sc, nodes, prefix)
			if err != nil {
				t.Fatal(err)
			}
			if res.Violations.Total() != 0 || res.Figures["sold"] != 60 || res.Counters.Timeouts != 0 || res.Counters.Errors != 0 {
				t.Fatalf("violations %+v sold %d counters %+v", res.Violations, res.Figures["sold"], res.Counters)
			}
			if n := res.RedisCost.ByCommand["publish"]; n != 0 {
				t.Fatalf("%d PUBLISH commands, want none (csc waits for invalidations)", n)
			}
			if res.AcquireMS.Max >= 2500 {
				t.Fatalf("longest acquire %.0f ms: waiters slept until the TTL fallback", res.AcquireMS.Max)
			}
			if res.Retry != "csc:max=0s" {
				t.Fatalf("retry recorded as %q, want csc:max=0s", res.Retry)
			}
			assertNoKeys(t, "rueidis", prefix)
		})
	}
	t.Run("goredis", func(t *testing.T) {
		sc := engine.Scenario{Spec: engine.Spec{Strategy: "atomic", Driver: "goredis", Workload: "flash-sale", Retry: policy(t, "csc"),
			Clients: 1, Duration: time.Second, TTL: time.Second, Options: registry.Values{"stock": int64(1), "skus": 1}}}
		_, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:"+t.Name()+":")
		want := "retry csc runs on the rueidis driver only (it waits for RESP3 client-side-caching invalidations), not on goredis: choose --driver rueidis"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Run(csc on goredis) = %v, want %q", err, want)
		}
	})
}
