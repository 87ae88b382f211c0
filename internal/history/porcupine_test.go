package history_test

import (
	"context"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	_ "github.com/lockbench/lockbench/drivers/all"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/history"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

// nopObs is a workloads.Observer that counts nothing.
type nopObs struct{}

func (nopObs) Acquired(int, time.Duration)            {}
func (nopObs) AcquireFailed(int, time.Duration, bool) {}
func (nopObs) Overshot()                              {}
func (nopObs) Cancelled()                             {}
func (nopObs) Held(time.Duration)                     {}
func (nopObs) Released(time.Duration, bool)           {}
func (nopObs) LeaseLost()                             {}
func (nopObs) ForeignRelease()                        {}
func (nopObs) WroteAfterLoss()                        {}
func (nopObs) FalseExtend()                           {}
func (nopObs) FalseAcquire()                          {}
func (nopObs) WriteRejected()                         {}
func (nopObs) Read()                                  {}
func (nopObs) Overlapped()                            {}

// TestPorcupineAgrees runs "processes" against one real redis-server and
// checks that Porcupine's lock model and Count agree, lock by lock. The
// processes are simulated in this test process: each is its own history
// (its own Header: Proc, segment i/N, its own CLOCK_MONOTONIC link and
// Redis offset), its own Env and in-process oracle, and one client whose
// sections Worker.Hold records into its own Buf, written to its own file
// and read back. With one client per process every overlap is a
// cross-process one, which is where Count and Porcupine must agree: a
// lock with overlaps is Illegal, one without is Ok.
func TestPorcupineAgrees(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	ctx := context.Background()
	topo, err := topology.Start(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(topo.Stop)
	const procs, ops = 3, 12
	ds, err := engine.Open(ctx, "goredis", []engine.Node{{Addr: topo.Servers[0].Addr, Password: topo.Servers[0].Password}}, procs)
	if err != nil {
		t.Fatal(err)
	}
	defer ds[0].Close()
	pol, err := retry.Parse("fixed:interval=1ms")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		strategy  string
		ttl, work time.Duration
		broken    bool
	}{
		{"naive", 15 * time.Millisecond, 40 * time.Millisecond, true}, // the lease expires mid-section
		{"atomic", 5 * time.Second, 2 * time.Millisecond, false},
	} {
		t.Run(c.strategy, func(t *testing.T) {
			prefix := "lockbench:histtest-" + c.strategy + ":"
			defer ds[0].Do(ctx, "DEL", prefix+"lock:0", prefix+"lock:1")
			locker, err := strategies.New(c.strategy, strategies.Config{Nodes: ds, TTL: c.ttl, Clients: procs, Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			var wg sync.WaitGroup
			errs := make([]error, procs)
			paths := make([]string, procs)
			for p := 0; p < procs; p++ {
				paths[p] = filepath.Join(dir, "p"+strconv.Itoa(p)+".history.jsonl.gz")
				wr := history.NewWriter(paths[p], history.Header{RunID: "histtest", Segment: p + 1, Segments: procs})
				rec := history.NewRecorder(1)
				env := &workloads.Env{Data: ds[0], Locker: locker, Prefix: prefix, Oracle: metrics.NewOracle(2), Clients: 1,
					Params: workloads.Params{Work: workloads.Fixed(c.work)}}
				rng := rand.New(rand.NewPCG(uint64(p), 1))
				w := &workloads.Worker{ID: 0, Env: env, Rng: rng, Backoff: pol.New(rng), Obs: nopObs{}, Gate: &strategies.Gate{}, Hist: rec.Worker(0)}
				wctx := strategies.WithClient(ctx, strategies.Client{ID: 0, Owner: prefix + "p" + strconv.Itoa(p), Gate: w.Gate})
				wg.Add(1)
				go func() {
					defer wg.Done()
					before, _ := history.MeasureOffset(ctx, ds[0], 0)
					for i := 0; i < ops; i++ {
						lock := i % 2
						err := w.Hold(wctx, lock, prefix+"lock:"+strconv.Itoa(lock), false, func(context.Context, strategies.Lease) error {
							w.Work()
							return nil
						})
						if err != nil && errs[p] == nil {
							errs[p] = err
						}
					}
					after, _ := history.MeasureOffset(ctx, ds[0], 0)
					if err := wr.Add(rec.Finish("scenario", c.strategy, 1, history.Combine(before, after))); err != nil {
						errs[p] = err
					}
				}()
			}
			wg.Wait()
			for p, err := range errs {
				if err != nil {
					t.Fatalf("process %d: %v", p, err)
				}
			}
			var parts []history.Part
			for _, path := range paths {
				f, err := history.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if n := len(f.Scenarios[0].Entries); n != ops || !f.Scenarios[0].Measured {
					t.Fatalf("%s: %d sections (want %d), offset measured %v", path, n, ops, f.Scenarios[0].Measured)
				}
				parts = append(parts, history.Part{Header: f.Header, Scenarios: f.Scenarios})
			}
			all, err := history.Count(parts)
			if err != nil {
				t.Fatal(err)
			}
			if !all.SameClock || all.Processes != procs {
				t.Fatalf("counts %+v: want %d processes on one clock", all, procs)
			}
			if c.broken && all.Certain == 0 {
				t.Fatalf("%s with a %v lease and %v of work: no cross-process overlap counted (%+v)", c.strategy, c.ttl, c.work, all)
			}
			if !c.broken && all.Certain+all.Possible != 0 {
				t.Fatalf("%s: %+v, want no overlap", c.strategy, all)
			}
			// Lock by lock: Porcupine Illegal exactly where Count found a pair.
			for lock := 0; lock < 2; lock++ {
				key := prefix + "lock:" + strconv.Itoa(lock)
				one := onlyKey(parts, key)
				n, err := history.Count(one)
				if err != nil {
					t.Fatal(err)
				}
				hops, err := history.PorcupineOperations(one)
				if err != nil {
					t.Fatal(err)
				}
				res := porcupine.CheckOperationsTimeout(history.PorcupineModel, hops, time.Minute)
				want := porcupine.Ok
				if n.Certain+n.Possible > 0 {
					want = porcupine.Illegal
				}
				t.Logf("%s: %d certain, %d possible, Porcupine %s", key, n.Certain, n.Possible, res)
				if res != want {
					t.Fatalf("%s: Count %+v but Porcupine %s", key, n, res)
				}
			}
		})
	}
}

// onlyKey is parts with only the sections of lock key.
func onlyKey(parts []history.Part, key string) []history.Part {
	var out []history.Part
	for _, p := range parts {
		q := history.Part{Header: p.Header}
		for _, s := range p.Scenarios {
			c := *s
			c.Entries = nil
			for _, e := range s.Entries {
				if e.Key == key {
					c.Entries = append(c.Entries, e)
				}
			}
			q.Scenarios = append(q.Scenarios, &c)
		}
		out = append(out, q)
	}
	return out
}
