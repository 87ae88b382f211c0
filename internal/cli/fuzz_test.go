package cli

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
		_, fl := newRunCmdFlags()
		fl.strategies, fl.drivers, fl.retries, fl.addr, fl.ttl = strats, drvs, retries, addr, ttl
		fl.clients, fl.duration, fl.out = clients, time.Second, t.TempDir()+"/r.json"
		fl.plugin["stock"], fl.pluginSet["stock"] = stock, true
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
