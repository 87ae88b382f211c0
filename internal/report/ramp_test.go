package report

import (
	"math"
	"testing"
)

// A scenario with a client ramp (params.clients_shape, raw.client_seconds,
// timeline entries with clients_mean): Jain's index is absent (the clients
// ran for different times), the ceiling counts the clients in force on
// average (client_seconds / window) instead of the maximum, and each
// timeline entry's efficiency is its ops/s over min(clients_mean, locks) /
// its own mean hold (hold_ms_sum / holds). Combined, client_seconds add up: side by side
// (Concurrent) the mean clients and each entry's clients double and the
// ceiling with them; one after another (Sequential) the window doubles
// too, and the ceiling stays. Without a ramp none of it changes a thing.
func TestClientRampDerive(t *testing.T) {
	holds := make([]int, 400)
	for i := range holds {
		holds[i] = 5000 // 5 ms
	}
	plain := rawScenario(t, 2, holds...)
	if !plain.HasJain() || plain.Fairness.JainIndex == 0 || plain.Ramped() {
		t.Fatalf("no ramp: jain %v (has %v), ramped %v", plain.Fairness.JainIndex, plain.HasJain(), plain.Ramped())
	}
	s := rawScenario(t, 2, holds...)
	s.Raw.Locks = 10 // own keys: the clients bound the ceiling
	s.Params = map[string]string{"clients_shape": "ramp:from=1,to=4,over=2s", "warmup": "0s"}
	s.Raw.ClientSeconds = 5 // 2.5 clients on average over 2 s
	s.Timeline = []Second{
		{TS: 1, Ops: 150, Clients: 3, ClientsMean: 1.5, Holds: 150, HoldMSSum: 750},  // 5 ms
		{TS: 2, Ops: 250, Clients: 4, ClientsMean: 3.5, Holds: 250, HoldMSSum: 1500}, // 6 ms
	}
	if err := Derive(&s); err != nil {
		t.Fatal(err)
	}
	if s.ClientsInForce() != 2.5 {
		t.Errorf("ramped: clients in force %v, want 5 client-seconds / 2 s = 2.5", s.ClientsInForce())
	}
	if s.HasJain() || s.Fairness.JainIndex != 0 {
		t.Errorf("ramped: jain %v (has %v), want absent", s.Fairness.JainIndex, s.HasJain())
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	hold := s.HoldMS.Mean / 1e3 // 5 ms, as the histogram keeps it
	if math.Abs(hold-0.005) > 0.00001 {
		t.Fatalf("mean hold %v s, want 5 ms", hold)
	}
	// 2.5 clients / 5 ms = 500 ops/s; 400 ops in 2 s = 200 ops/s.
	if !near(s.CeilingOpsPerSec, 2.5/hold) || !near(s.Efficiency, 200/(2.5/hold)) {
		t.Errorf("ramped: ceiling %v efficiency %v, want %v and %v", s.CeilingOpsPerSec, s.Efficiency, 2.5/hold, 200/(2.5/hold))
	}
	// Each entry against its own mean hold: 150 ops/s against 1.5 / 5 ms
	// = 300; 250 against 3.5 / 6 ms.
	for i, want := range []float64{150 / (1.5 / 0.005), 250 / (3.5 / 0.006)} {
		if e := s.Timeline[i].Efficiency; !near(e, want) {
			t.Errorf("entry %d: efficiency %v, want %v", i, e, want)
		}
	}
	for mode, factor := range map[Mode]float64{Concurrent: 2, Sequential: 1} {
		c, err := Combine(mode, []Scenario{s, s})
		if err != nil {
			t.Fatal(err)
		}
		if c.Raw.ClientSeconds != 10 || !near(c.CeilingOpsPerSec, factor*2.5/hold) || c.Fairness.JainIndex != 0 {
			t.Errorf("mode %v: client_seconds %v ceiling %v jain %v, want 10, %v and absent", mode, c.Raw.ClientSeconds, c.CeilingOpsPerSec, c.Fairness.JainIndex, factor*2.5/hold)
		}
		if mode == Concurrent {
			e := c.Timeline[1]
			if e.Clients != 8 || e.ClientsMean != 7 || e.Holds != 500 || !near(e.Efficiency, 500/(7/0.006)) {
				t.Errorf("side by side: entry 1 %+v, want clients 8, clients_mean 7, 500 holds, efficiency %v", e, 500/(7/0.006))
			}
		} else if len(c.Timeline) != 4 || !near(c.Timeline[3].Efficiency, 250/(3.5/0.006)) {
			t.Errorf("one after another: timeline %+v, want 4 entries, the last's efficiency %v", c.Timeline, 250/(3.5/0.006))
		}
	}
}
