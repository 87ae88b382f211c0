package cli

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/lockbench/lockbench/internal/arrival"
	"github.com/lockbench/lockbench/internal/report"
)

// checkOffered asserts that each timeline entry's offered is the shape's
// arrivals due in its interval (Due at its end less Due at its start, the
// last one cut at the end of --duration), within one arrival of the
// shape's integral over it, and that they add up to the arrivals due
// before the end.
func checkOffered(t *testing.T, s report.Scenario, sh *arrival.Shape, warmup, end float64) {
	t.Helper()
	if len(s.Timeline) == 0 {
		t.Fatal("no timeline")
	}
	prev := warmup
	var sum int64
	for i, e := range s.Timeline {
		a, b := prev, math.Min(e.TS, end)
		integral := sh.Cum(b) - sh.Cum(a)
		want := sh.Due(b) - sh.Due(a)
		if e.Offered != want || math.Abs(float64(e.Offered)-integral) > 1.000001 {
			t.Errorf("interval %d (%.3f to %.3f s): offered %d, want %d (the shape's integral %.2f)", i, a, e.TS, e.Offered, want, integral)
		}
		sum += e.Offered
		prev = e.TS
	}
	if due := sh.Due(end) - sh.Due(warmup); sum != due {
		t.Errorf("the timeline offers %d arrivals, want the %d due in the window", sum, due)
	}
}

// A ramp below capacity from the CLI (the test): the timeline's
// offered is the ramp's integral per interval, and the achieved rate (ops)
// is within 2 % of it in every whole interval, with no arrival dropped;
// the JSON records the shape as given and its mean as offered_rate.
// 200 to 800 ops/s of lock-cycle on the clients' own keys, no critical
// section, 40 clients: far below what one loaded core serves, with
// --drop-after 1s so that a stall of the machine delays arrivals rather
// than drops them. 2 % of the first second's 275 arrivals is 5: the
// sampler may read a few ms late, shifting a few operations into the
// interval before.
func TestRampOfferedAndAchievedTimed(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ramp.json")
	const spec = "ramp:from=200,to=800,over=4s"
	_, run := runAndRead(t, out, "run", "-q", "--strategy", "atomic", "--driver", "rueidis", "--workload", "lock-cycle", "--own-keys",
		"--work", "0s", "--clients", "40", "--drop-after", "1s", "--rate", spec, "--duration", "5s", "--out", out)
	s := run.Scenarios[0]
	sh, err := arrival.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	// The mean over 0..5 s: (2000 + 800) / 5.
	if s.Loop != "open" || s.Params["rate_shape"] != spec || s.OfferedRate != 560 {
		t.Fatalf("loop %q, rate_shape %q, offered_rate %v; want open, %q, 560", s.Loop, s.Params["rate_shape"], s.OfferedRate, spec)
	}
	checkOffered(t, s, sh, 0, 5)
	if len(s.Timeline) < 5 {
		t.Fatalf("%d timeline entries, want 5", len(s.Timeline))
	}
	prev := 0.0
	for i, e := range s.Timeline[:len(s.Timeline)-1] { // the last may be partial
		t.Logf("interval %d to %.3f s: offered %d (rate %.1f/s), ops %d, dropped %d", i, e.TS, e.Offered, float64(e.Offered)/(e.TS-prev), e.Ops, e.Dropped)
		// An interval counts the arrivals due in it and the operations
		// that ended in it: a stall of the process at its edge moves
		// operations to the next one. The slack is 2 % or the 40 clients'
		// worth (one operation each in flight across the edge), whichever
		// is more: a ramp that did not track its target misses by
		// hundreds (200 to 800 over the 4 s).
		if slack := max(0.02*float64(e.Offered), 40); math.Abs(float64(e.Ops-e.Offered)) > slack {
			t.Errorf("interval %d: %d ops against %d offered, more than %.0f apart", i, e.Ops, e.Offered, slack)
		}
		prev = e.TS
	}
	for _, e := range s.Timeline {
		if e.Dropped != 0 {
			t.Errorf("%d arrivals dropped in the interval to %.3f s, want none below capacity", e.Dropped, e.TS)
		}
	}
	// Every arrival due in the 5 s is decided (offered) or, when the
	// machine stalled the scheduler near the end, undecided: together
	// exactly the 2,800 due before 5 s (the one due at 5 s itself is not).
	// A loaded machine left 35 undecided once.
	if s.Dropped != 0 || s.Offered+s.Undecided != 2800 || s.Undecided > 100 {
		t.Errorf("offered %d, undecided %d, dropped %d; want offered + undecided = 2800, undecided at most 100, 0 dropped", s.Offered, s.Undecided, s.Dropped)
	}
}

// A scenario file's k6-style stages (with start-rate) set --rate: the
// result records them in --rate's form, and the timeline offers their
// integral, the last target held after the stages end; the command line's
// --rate wins over the file's stages.
func TestStagesFromFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "stages.yaml")
	body := `strategy: atomic
driver: rueidis
workload: lock-cycle
own-keys: true
work: 0s
clients: 20
start-rate: 50
stages:
  - duration: 1s
    target: 150
  - {duration: 500ms, target: 150}
  - {duration: 500ms, target: 60}
duration: 3s
`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	r, run := runAndRead(t, out, "run", "-q", "-f", path, "--out", out)
	s := run.Scenarios[0]
	const spec = "stages:start=50,1s=150,500ms=150,500ms=60"
	sh, err := arrival.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	// 100 + 75 + 52.5 in the stages, then 60/s for 1 s: 287.5 in 3 s.
	if s.Params["rate_shape"] != spec || math.Abs(s.OfferedRate-287.5/3) > 1e-9 {
		t.Fatalf("rate_shape %q, offered_rate %v; want %q and %v", s.Params["rate_shape"], s.OfferedRate, spec, 287.5/3)
	}
	checkOffered(t, s, sh, 0, 3)

	// --rate on the command line wins: a constant, no shape recorded.
	r = lockbench(t, "run", "-q", "-f", path, "--rate", "40", "--duration", "1s", "--force", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if run, err = report.ReadFile(out); err != nil {
		t.Fatal(err)
	}
	if s := run.Scenarios[0]; s.OfferedRate != 40 || s.Params["rate_shape"] != "" {
		t.Fatalf("with --rate 40: offered_rate %v, rate_shape %q; want 40 and none", s.OfferedRate, s.Params["rate_shape"])
	}
}

// validate turns --rate's shape into each scenario's Shape, with Rate its
// mean over the measured window (warm-up excluded, on the scenario's
// clock), leaving the flags as they were; the open-loop flags go with a
// shape.
func TestValidateRateShape(t *testing.T) {
	cmd, f := newRunCmdFlags()
	if err := cmd.Flags().Parse([]string{"--rate", "ramp:from=100,to=400,over=4s", "--warmup", "1s", "--duration", "5s",
		"--arrivals", "poisson", "--max-clients", "7", "--out", filepath.Join(t.TempDir(), "r.json")}); err != nil {
		t.Fatal(err)
	}
	before := *f
	p, err := validate(f)
	if err != nil {
		t.Fatalf("validate: %v", err)
	}
	if !reflect.DeepEqual(*f, before) {
		t.Errorf("validate changed its runFlags")
	}
	sc := p.scenarios[0]
	// Cum(6) - Cum(1) = (1000 + 400*2) - 137.5 over 5 s.
	if sc.Shape == nil || sc.Shape.String() != "ramp:from=100,to=400,over=4s" || sc.Rate != (1800-137.5)/5 || !sc.Poisson || sc.Clients != 7 {
		t.Fatalf("scenario: shape %v, rate %v, poisson %v, %d clients; want the ramp, 332.5, poisson, 7", sc.Shape, sc.Rate, sc.Poisson, sc.Clients)
	}
	if sc.ParamsMap()["rate_shape"] != "ramp:from=100,to=400,over=4s" {
		t.Errorf("params %v lack rate_shape", sc.ParamsMap())
	}
}
