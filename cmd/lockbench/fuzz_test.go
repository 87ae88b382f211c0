package main

import (
	"errors"
	"testing"
	"time"
)

// validate never panics: it returns a plan or a usage error (exit 2).
func FuzzValidate(f *testing.F) {
	f.Add("atomic,naive", "goredis", "fixed,backoff:cap=1s", "", "auto", int64(1000), 50)
	f.Add(",,", "", ",,", "::1", "0s", int64(0), 0)
	f.Add("redlock", "rueidis", "pubsub:max=1ms", "redis://:pw@127.0.0.1:6379,127.0.0.1:1", "5ms", int64(-1), -5)
	f.Fuzz(func(t *testing.T, strats, drvs, retries, addr, ttl string, stock int64, clients int) {
		fl := &runFlags{
			strategies: strats, drivers: drvs, workloads: "flash-sale", retries: retries, addr: addr, ttl: ttl,
			stock: stock, clients: clients, duration: time.Second, skus: 1, nodes: 5, segments: 8, instances: 4,
			guard: "auto", out: t.TempDir() + "/r.json", work: "1ms",
		}
		p, err := validate(fl)
		if err != nil {
			var ue usageError
			if !errors.As(err, &ue) {
				t.Fatalf("validate error is not a usage error: %v", err)
			}
			return
		}
		if len(p.scenarios) == 0 {
			t.Fatal("a valid plan with no scenario")
		}
	})
}
