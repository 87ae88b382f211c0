package arrival

import (
	"math"
	"strings"
	"testing"
)

func mustParse(t *testing.T, s string) *Shape {
	t.Helper()
	sh, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return sh
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

// Cum at chosen points against the closed forms of each shape's integral,
// Rate at the same points, and the last rate held after the shape ends.
func TestCumClosedForms(t *testing.T) {
	cases := []struct {
		spec      string
		t, cum, r []float64
	}{
		// r = 100: Cum = 100 t.
		{"100", []float64{0, 0.5, 1, 10}, []float64{0, 50, 100, 1000}, []float64{100, 100, 100, 100}},
		// r = 50 + 37.5 t for 4 s, then 200: Cum = 50 t + 18.75 t^2, then 500 + 200 (t - 4).
		{"ramp:from=50,to=200,over=4s", []float64{1, 2, 3, 4, 5, 6.5},
			[]float64{68.75, 175, 318.75, 500, 700, 1000}, []float64{87.5, 125, 162.5, 200, 200, 200}},
		// A ramp down: r = 200 - 50 t for 2 s, then 100.
		{"ramp:from=200,to=100,over=2s", []float64{1, 2, 3}, []float64{175, 300, 400}, []float64{150, 100, 100}},
		// r = 100 + 50 sin(2 pi t / 4): Cum = 100 t + (100/pi)(1 - cos(pi t / 2)).
		{"sine:mean=100,amp=50,period=4s", []float64{1, 2, 3, 4, 8},
			[]float64{100 + 100/math.Pi, 200 + 200/math.Pi, 300 + 100/math.Pi, 400, 800}, []float64{150, 100, 50, 100, 100}},
		// k6 stages from 0: up to 100 over 2 s, 100 for 2 s, down to 0 over
		// 1 s, then 0 held: Cum stays at 350.
		{"stages:2s=100,2s=100,1s=0", []float64{1, 2, 3, 4, 4.5, 5, 60},
			[]float64{25, 100, 200, 300, 337.5, 350, 350}, []float64{50, 100, 100, 100, 50, 0, 0}},
		// A start rate: 50 to 150 over 1 s, then 150.
		{"stages:start=50,1s=150", []float64{1, 2}, []float64{100, 250}, []float64{150, 150}},
	}
	for _, c := range cases {
		sh := mustParse(t, c.spec)
		if sh.String() != c.spec {
			t.Errorf("String() = %q, want %q", sh.String(), c.spec)
		}
		for i, x := range c.t {
			if got := sh.Cum(x); !near(got, c.cum[i]) {
				t.Errorf("%s: Cum(%v) = %v, want %v", c.spec, x, got, c.cum[i])
			}
			if got := sh.Rate(x); !near(got, c.r[i]) {
				t.Errorf("%s: Rate(%v) = %v, want %v", c.spec, x, got, c.r[i])
			}
		}
	}
}

// Inv inverts Cum: Cum(Inv(n)) = n, Inv is non-decreasing, and for the
// closed forms Inv gives the exact times.
func TestInv(t *testing.T) {
	for _, spec := range []string{"100", "0.5", "ramp:from=50,to=200,over=4s", "ramp:from=0,to=100,over=10s",
		"ramp:from=300,to=0,over=3s", "sine:mean=100,amp=100,period=2s", "sine:mean=7,amp=3,period=1m",
		"stages:2s=100,2s=100,1s=0,3s=0,1s=40", "stages:start=80,10s=80,500ms=2000"} {
		sh := mustParse(t, spec)
		prev := 0.0
		for n := 0.0; n < 3000; n += 0.37 {
			x := sh.Inv(n)
			if math.IsInf(x, 1) {
				continue
			}
			if x < prev {
				t.Fatalf("%s: Inv(%v) = %v before Inv of the step before, %v", spec, n, x, prev)
			}
			prev = x
			if c := sh.Cum(x); math.Abs(c-n) > 1e-6*max(1, n) {
				t.Fatalf("%s: Cum(Inv(%v)) = %v", spec, n, c)
			}
		}
	}
	exact := []struct {
		spec string
		n, t float64
	}{
		{"400", 1, 0.0025}, {"400", 1000, 2.5},
		{"ramp:from=50,to=200,over=4s", 68.75, 1}, {"ramp:from=50,to=200,over=4s", 500, 4}, {"ramp:from=50,to=200,over=4s", 700, 5},
		{"ramp:from=0,to=100,over=10s", 5, 1}, // 5 t^2 = 5
		{"sine:mean=100,amp=50,period=4s", 400, 4}, {"sine:mean=100,amp=50,period=4s", 200 + 200/math.Pi, 2},
		{"stages:2s=100,2s=100,1s=0", 350, 5}, {"stages:2s=100,2s=100,1s=0", 100, 2},
	}
	for _, c := range exact {
		if got := mustParse(t, c.spec).Inv(c.n); math.Abs(got-c.t) > 1e-9 {
			t.Errorf("%s: Inv(%v) = %v, want %v", c.spec, c.n, got, c.t)
		}
	}
	// Stages that end at 0: no arrival after the 350 expected ones.
	if got := mustParse(t, "stages:2s=100,2s=100,1s=0").Inv(350.5); !math.IsInf(got, 1) {
		t.Errorf("Inv past the last arrival of stages ending at 0 = %v, want +Inf", got)
	}
	// In a stretch of rate 0 the next arrival waits for the rate to rise:
	// Cum is 350 from 5 s to 8 s, then 20 t^2 (t from 8 s).
	if got := mustParse(t, "stages:2s=100,2s=100,1s=0,3s=0,1s=40").Inv(355); math.Abs(got-8.5) > 1e-9 {
		t.Errorf("Inv(355) = %v, want 8.5", got)
	}
}

// Due counts the arrivals n with Inv(n) < t: whole numbers of Cum count as
// that number (the arrival due at t is the next interval's).
func TestDue(t *testing.T) {
	ramp := mustParse(t, "ramp:from=50,to=200,over=4s")
	for _, c := range []struct {
		t    float64
		want int64
	}{{0, 0}, {1e-9, 1}, {1, 69}, {2, 175}, {3, 319}, {4, 500}, {5, 700}} {
		if got := ramp.Due(c.t); got != c.want {
			t.Errorf("ramp Due(%v) = %d, want %d", c.t, got, c.want)
		}
	}
	c := Constant(100)
	for k := int64(0); k <= 100; k++ {
		if got := c.Due(float64(k) / 10); got != 10*k {
			t.Fatalf("constant 100: Due(%v) = %d, want %d", float64(k)/10, got, 10*k)
		}
	}
	if m := ramp.Mean(0, 4); !near(m, 125) {
		t.Errorf("ramp mean over its 4 s = %v, want 125", m)
	}
	if m := ramp.Mean(2, 6); !near(m, (900-175)/4.0) {
		t.Errorf("ramp mean over 2..6 s = %v", m)
	}
	if ramp.MaxRate() != 200 || ramp.Length() != 4 || mustParse(t, "sine:mean=10,amp=5,period=1s").MaxRate() != 15 {
		t.Errorf("max rate %v, length %v", ramp.MaxRate(), ramp.Length())
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"fast", "want a rate in ops/s"},
		{"-5", "want a rate in ops/s"},
		{"zigzag:a=1", `unknown shape "zigzag"`},
		{"ramp:from=10,to=100", "over missing"},
		{"ramp:from=10,to=100,over=0s", "over=0s: want a duration above 0"},
		{"ramp:from=-10,to=100,over=1s", "from=-10: a rate cannot be negative"},
		{"ramp:from=10,to=100,over=1s,step=2", `unknown key "step"`},
		{"ramp:from=10,from=20,to=100,over=1s", "from is given twice"},
		{"ramp:from=0,to=0,over=1s", "rate is 0 throughout"},
		{"ramp:from=1,to=2e8,over=1s", "above 10000000"},
		{"ramp:", "no parameters"},
		{"ramp:from", `"from" is not key=value`},
		{"sine:mean=100,amp=150,period=1s", "amp=150 is above mean=100"},
		{"sine:mean=100,amp=50,period=0s", "period=0s: want a duration above 0"},
		{"sine:mean=100,amp=50", "period missing"},
		{"sine:mean=0,amp=0,period=1s", "want a mean above 0"},
		{"sine:mean=100,amp=-1,period=1s", "amp=-1: a rate cannot be negative"},
		{"stages:30s=100,1m=-1", "target=-1: a rate cannot be negative"},
		{"stages:soon=100", `"soon" is not a duration`},
		{"stages:30s=0,1m=0", "rate is 0 throughout"},
		{"stages:30s=10,start=5", "start=R0 must come first"},
		{"stages:start=5", "no stage"},
	} {
		_, err := Parse(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", c.spec, err, c.want)
		}
	}
	if got := StagesSpec("10", []Stage{{"30s", "100"}, {"1m", "0"}}); got != "stages:start=10,30s=100,1m=0" {
		t.Errorf("StagesSpec = %q", got)
	}
}
