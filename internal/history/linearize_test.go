package history

import (
	"os"
	"strings"
	"testing"
	"time"
)

// Linearize on hand-built histories: per lock key, Porcupine's verdict
// and lockbench's own count agree, and the exact key counts come out.
func TestLinearizeAgrees(t *testing.T) {
	cases := []struct {
		name                             string
		parts                            []Part
		verdict                          string
		locks, illegal, overlap, section int64
	}{
		// Three processes (uncertainties 100, 50 and 10 ns): k has certain
		// pairs (illegal), k2 a possible one only (ok: the clocks allow an
		// order), k3 one section.
		{name: "three-processes", parts: []Part{
			part("A", "ha", 0, 100,
				sec{key: "k", start: 0, end: 1000},
				sec{key: "k2", start: 2000, end: 3000}),
			part("B", "hb", 40, 50,
				sec{key: "k", start: 100, end: 900},
				sec{key: "k3", start: 2000, end: 3000}),
			part("C", "hc", -60, 10,
				sec{key: "k", start: 840, end: 2000},
				sec{key: "k2", start: 2890, end: 3500, shared: true}),
		}, verdict: VerdictIllegal, locks: 3, illegal: 1, overlap: 1, section: 6},
		// Only possible pairs (d at or under the combined uncertainty),
		// touching sections and two readers: ok, no overlap counted.
		{name: "possible-only", parts: []Part{
			part("A", "ha", 1_000_000, 100,
				sec{key: "k", start: 2000, end: 3000},
				sec{key: "k", start: 4000, end: 5000},
				sec{key: "k", start: 6000, end: 7000, shared: true}),
			part("B", "hb", -3000, 50,
				sec{key: "k", start: 2850, end: 3500}, // d = 150: possible
				sec{key: "k", start: 5000, end: 5500}, // touches
				sec{key: "k", start: 6500, end: 7500, shared: true}),
		}, verdict: VerdictOK, locks: 1, section: 6},
		// One process, two clients inside one lock at once (the in-process
		// oracle's pair, which Count leaves out): both see it.
		{name: "one-process", parts: []Part{
			part("A", "ha", 0, 0,
				sec{key: "k", start: 0, end: 1000, client: 0},
				sec{key: "k", start: 500, end: 1500, client: 1},
				sec{key: "k2", start: 0, end: 1000, client: 2}),
		}, verdict: VerdictIllegal, locks: 2, illegal: 1, overlap: 1, section: 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := Linearize(c.parts, time.Minute, 0)
			if err != nil {
				t.Fatal(err)
			}
			if l.Verdict != c.verdict || l.Locks != c.locks || l.IllegalLocks != c.illegal || l.OverlapLocks != c.overlap ||
				l.Disagreements != 0 || l.UnknownLocks != 0 || l.Sections != c.section || l.Operations != 2*c.section || l.Reason != "" {
				t.Errorf("got %+v; want verdict %s, %d locks, %d illegal, %d with an overlap, %d sections, no disagreement", l, c.verdict, c.locks, c.illegal, c.overlap, c.section)
			}
		})
	}
}

// Over the size bound nothing is checked: unknown, with the reason.
func TestLinearizeSizeBound(t *testing.T) {
	parts := []Part{part("A", "ha", 0, 0, sec{key: "k", start: 0, end: 10}, sec{key: "k", start: 20, end: 30})}
	l, err := Linearize(parts, time.Minute, 1)
	if err != nil {
		t.Fatal(err)
	}
	if l.Verdict != VerdictUnknown || l.Operations != 0 || l.UnknownLocks != 1 || !strings.Contains(l.Reason, "over the bound of 1") {
		t.Errorf("got %+v, want unknown over the bound of 1", l)
	}
}

// A history Porcupine cannot decide in its budget comes back unknown
// when the budget runs out, never hangs: 24 sections of one process
// whose clock is uncertain to 1 ms, all within 250 ns (every acquire and
// release concurrent with every other: each order of them is a branch),
// then an overlap of two exact processes that no order of the first
// ones removes. Porcupine's search through the first ones' orders is
// exponential (C(48, 24) states), far beyond the 300 ms budget.
func TestLinearizeBudget(t *testing.T) {
	var ss []sec
	for i := int64(0); i < 24; i++ {
		ss = append(ss, sec{key: "k", start: i * 10, end: i*10 + 5, client: int32(i)})
	}
	parts := []Part{
		part("A", "ha", 0, 1_000_000, ss...),
		part("B", "hb", 0, 0, sec{key: "k", start: 100_000_000, end: 200_000_000}),
		part("C", "hc", 0, 0, sec{key: "k", start: 150_000_000, end: 250_000_000}),
	}
	l, err := Linearize(parts, 300*time.Millisecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	if l.Verdict != VerdictUnknown || l.UnknownLocks != 1 || l.OverlapLocks != 1 || l.Disagreements != 0 ||
		!strings.Contains(l.Reason, "time budget of 300ms ran out") {
		t.Errorf("got %+v, want unknown (the budget ran out) on the one lock, with its overlap counted, no disagreement", l)
	}
}

// PorcupineVersion names the version go.mod requires, so that a result's
// account of the check does not drift from the module it ran.
func TestPorcupineVersionMatchesGoMod(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := "github.com/anishathalye/porcupine " + PorcupineVersion
	for _, line := range strings.Split(string(mod), "\n") {
		if strings.TrimSpace(line) == want {
			return
		}
	}
	t.Fatalf("go.mod has no line %q: update PorcupineVersion", want)
}
