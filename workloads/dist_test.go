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
