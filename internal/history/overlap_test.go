package history

import (
	"testing"
)

// Exact Certain and Possible counts of Count on hand-built histories of
// several processes. Sections are given on the common clock (part
// subtracts each process's offset). Each case places overlaps of d ns on
// both sides of the certain/possible boundary (d > uA + uB is certain, 0 <
// d <= uA + uB possible): d at the boundary, one below, one above, and
// between the larger uncertainty and the sum, with either process's
// section starting first and one inside the other; and reader/writer
// pairs across processes, which count like writer pairs (only two
// read-side sections may overlap).
func TestCountExact(t *testing.T) {
	cases := []struct {
		name              string
		parts             []Part
		certain, possible int64
	}{
		// A's clock is uncertain to 100 ns, B's to 50: the boundary is 150.
		{name: "boundary", parts: []Part{
			part("A", "ha", 1_000_000, 100,
				sec{key: "k", start: 0, end: 1000},
				sec{key: "k", start: 2000, end: 3000},
				sec{key: "k", start: 4000, end: 5000},
				sec{key: "k", start: 6850, end: 7600},
				sec{key: "k", start: 8849, end: 9500},
				sec{key: "k", start: 10000, end: 11000},
				sec{key: "k", start: 12000, end: 13000},
				sec{key: "k", start: 14000, end: 15000},
				sec{key: "k", start: 16000, end: 17000},
				sec{key: "k", start: 18000, end: 19000},
			),
			part("B", "hb", -3000, 50,
				sec{key: "k", start: 849, end: 1500},    // A first, d = 151: certain
				sec{key: "k", start: 2850, end: 3500},   // d = 150, at the boundary: possible
				sec{key: "k", start: 4851, end: 5500},   // d = 149: possible
				sec{key: "k", start: 6000, end: 7000},   // B first, d = 150: possible
				sec{key: "k", start: 8000, end: 9000},   // B first, d = 151: certain
				sec{key: "k", start: 10100, end: 10251}, // inside A's, d = 151: certain
				sec{key: "k", start: 10500, end: 10650}, // inside A's, d = 150: possible
				sec{key: "k", start: 12899, end: 13500}, // d = 101, over A's 100 alone: possible
				sec{key: "k", start: 15000, end: 15200}, // touches A's: not counted
				sec{key: "k", start: 17001, end: 17500}, // 1 ns after A's: not counted
				sec{key: "k", start: 18999, end: 19500}, // d = 1: possible
			),
		}, certain: 3, possible: 6},
		// Reader (shared) and writer sections of two processes, boundary
		// 150 again; two readers never count, nor a process's own pair.
		{name: "reader-writer", parts: []Part{
			part("A", "ha", 0, 100,
				sec{key: "k", start: 0, end: 1000, shared: true},
				sec{key: "k", start: 2500, end: 2600},
				sec{key: "k", start: 4000, end: 5000},
				sec{key: "k", start: 6000, end: 7000},
				sec{key: "k", start: 8000, end: 9000, shared: true},
				sec{key: "k", start: 10000, end: 11000, shared: true},
				sec{key: "k", start: 10100, end: 10900, client: 1}, // A's writer inside A's reader: A's own
			),
			part("B", "hb", 777, 50,
				sec{key: "k", start: 500, end: 1500},                  // writer in A's reader, d = 500: certain
				sec{key: "k", start: 2000, end: 3000, shared: true},   // reader around A's writer, d = 100: possible
				sec{key: "k", start: 4849, end: 5200, shared: true},   // reader after A's writer, d = 151: certain
				sec{key: "k", start: 6850, end: 7200, shared: true},   // reader after A's writer, d = 150: possible
				sec{key: "k", start: 8100, end: 8900, shared: true},   // two readers: not counted
				sec{key: "k", start: 10800, end: 11500, shared: true}, // A's reader (no), A's writer d = 100: possible
			),
		}, certain: 2, possible: 3},
		// Three processes (uncertainties 100, 50 and 10 ns) on one key,
		// each pair once, against its own two processes' boundary; the
		// other keys apart.
		{name: "three-processes", parts: []Part{
			part("A", "ha", 0, 100,
				sec{key: "k", start: 0, end: 1000}, // B's inside, d = 800 > 150: certain
				sec{key: "k2", start: 2000, end: 3000}),
			part("B", "hb", 40, 50,
				sec{key: "k", start: 100, end: 900},
				sec{key: "k3", start: 2000, end: 3000}), // no one else on k3
			part("C", "hc", -60, 10,
				sec{key: "k", start: 840, end: 2000},                 // A: d = 160 > 110, certain; B: d = 60 = 50 + 10, possible
				sec{key: "k2", start: 2890, end: 3500, shared: true}, // reader on A's writer, d = 110 = 100 + 10: possible
			),
		}, certain: 2, possible: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Count(c.parts)
			if err != nil {
				t.Fatal(err)
			}
			if got.Certain != c.certain || got.Possible != c.possible {
				t.Errorf("certain %d, possible %d; want %d, %d", got.Certain, got.Possible, c.certain, c.possible)
			}
			if got.SameClock || got.Processes != len(c.parts) {
				t.Errorf("counts %+v: want %d processes on the server's clock", got, len(c.parts))
			}
		})
	}
}

// On one host, the boundary is the CLOCK_MONOTONIC links' errors
// (MonoErrNS, here 20 and 30 ns: 50), not the Redis offsets'
// uncertainties (100 and 50), and the entries are placed by MonoBaseNS,
// not by the offsets.
func TestCountSameHostBoundary(t *testing.T) {
	a := part("A", "h", 5000, 100,
		sec{key: "k", start: 0, end: 1000},
		sec{key: "k", start: 2000, end: 3000},
		sec{key: "k", start: 4000, end: 5000},
		sec{key: "k", start: 6000, end: 7000, shared: true},
		sec{key: "k", start: 8000, end: 9000, shared: true},
	)
	b := part("B", "h", -7000, 50,
		sec{key: "k", start: 949, end: 1500},                // d = 51: certain
		sec{key: "k", start: 2950, end: 3500},               // d = 50: possible
		sec{key: "k", start: 4901, end: 5500},               // d = 99, under the offsets' 150: certain here
		sec{key: "k", start: 6949, end: 7500},               // writer after A's reader, d = 51: certain
		sec{key: "k", start: 8950, end: 9500, shared: true}, // two readers: not counted
	)
	a.Header.MonoErrNS, b.Header.MonoErrNS = 20, 30
	for _, p := range []Part{a, b} {
		p.Scenarios[0].OffsetNS += 1_000_000 // not used on one host
	}
	got, err := Count([]Part{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if got.Certain != 3 || got.Possible != 1 || !got.SameClock || got.MaxUncertainty != 30 {
		t.Fatalf("counts %+v, want 3 certain, 1 possible, same clock, uncertainty 30 ns", got)
	}
	if s, want := got.Text(), "2 histories, same host: exact to 30ns (clock link)"; s != want {
		t.Errorf("text %q, want %q", s, want)
	}
}
