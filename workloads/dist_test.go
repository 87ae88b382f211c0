package workloads

import (
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestParseDist(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	d, err := ParseDist("80ms")
	if err != nil || d.Sample(rng) != 80*time.Millisecond || d.Mean() != 80*time.Millisecond {
		t.Fatalf("fixed: %v %v", d, err)
	}
	u, err := ParseDist("uniform:10ms-40ms")
	if err != nil || u.Mean() != 25*time.Millisecond {
		t.Fatalf("uniform: %v %v", u, err)
	}
	for i := 0; i < 10000; i++ {
		if v := u.Sample(rng); v < 10*time.Millisecond || v > 40*time.Millisecond {
			t.Fatalf("uniform sample %v out of range", v)
		}
	}
	l, err := ParseDist("lognormal:median=5ms,p99=80ms")
	if err != nil {
		t.Fatal(err)
	}
	xs := make([]time.Duration, 100000)
	for i := range xs {
		xs[i] = l.Sample(rng)
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	med, p99 := xs[len(xs)/2], xs[len(xs)*99/100]
	if med < 4700*time.Microsecond || med > 5300*time.Microsecond || p99 < 70*time.Millisecond || p99 > 90*time.Millisecond {
		t.Fatalf("lognormal median %v p99 %v, want about 5ms and 80ms", med, p99)
	}
	for _, bad := range []string{"", "soon", "-1ms", "uniform:40ms-10ms", "uniform:10ms", "lognormal:median=5ms", "lognormal:median=9ms,p99=1ms", "gamma:1", "lognormal:mean=1ms,p99=2ms"} {
		if _, err := ParseDist(bad); err == nil {
			t.Errorf("ParseDist(%q) accepted", bad)
		} else if strings.Contains(err.Error(), "panic") {
			t.Errorf("ParseDist(%q): %v", bad, err)
		}
	}
}

// exp:mean=D parses, and its draws (with a fixed seed) are exponential
// with that mean: the sample mean of 200,000 draws within 1 % of it (its
// standard error is 0.22 %), the median near mean x ln 2, none negative or
// beyond the cap; the same seed gives the same draws.
func TestParseDistExp(t *testing.T) {
	d, err := ParseDist("exp:mean=20ms")
	if err != nil {
		t.Fatal(err)
	}
	if d.Mean() != 20*time.Millisecond || d.Max() != ExpCap*20*time.Millisecond || d.IsZero() || d.String() != "exp:mean=20ms" {
		t.Fatalf("exp:mean=20ms: mean %v max %v zero %v string %q", d.Mean(), d.Max(), d.IsZero(), d.String())
	}
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 200000
	xs := make([]time.Duration, n)
	var sum time.Duration
	for i := range xs {
		v := d.Sample(rng)
		if v < 0 || v > d.Max() {
			t.Fatalf("draw %v outside [0, %v]", v, d.Max())
		}
		xs[i] = v
		sum += v
	}
	mean := sum / n
	if mean < 19800*time.Microsecond || mean > 20200*time.Microsecond {
		t.Fatalf("sample mean %v, want 20ms within 1%%", mean)
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	// The median of an exponential is mean x ln 2 (13.86 ms).
	if med := xs[n/2]; med < 13500*time.Microsecond || med > 14200*time.Microsecond {
		t.Fatalf("sample median %v, want about 13.86ms", med)
	}
	a, b := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 100; i++ {
		if x, y := d.Sample(a), d.Sample(b); x != y {
			t.Fatalf("draw %d: %v and %v from the same seed", i, x, y)
		}
	}
	for _, bad := range []string{"exp:mean=-1s", "exp:mean=0s", "exp:mean=", "exp:", "exp:median=1ms", "exp:mean=1ms,p99=2ms", "exp:mean=soon", "exp"} {
		if _, err := ParseDist(bad); err == nil {
			t.Errorf("ParseDist(%q) accepted", bad)
		}
	}
}
