package workloads

import (
	"slices"
	"strings"
	"testing"
)

func TestParseMix(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{in: "read=0.8,write=0.2", want: "write=0.2,read=0.8"},
		{in: " write = 80% , nested = 20% ", want: "write=0.8,nested=0.2"},
		{in: "write=1", want: "write=1"},
		{in: "read=1/3,write=2/3", err: "not a number"},
		{in: "read=0.333333,write=0.333333,nested=0.333334", want: "write=0.333333,read=0.333333,nested=0.333334"},
		{in: "", err: "empty mix"},
		{in: "reader=0.5,write=0.5", err: `unknown role "reader" (roles: write, read, nested)`},
		{in: "read=0.8,write=0.3", err: "the shares sum to 1.1, not 1"},
		{in: "read=0.8", err: "the shares sum to 0.8, not 1"},
		{in: "read=0,write=1", err: "the share must be > 0"},
		{in: "read=-0.5,write=1.5", err: "the share must be > 0"},
		{in: "read=0.5,read=0.5", err: "role read given twice"},
		{in: "read", err: "want ROLE=SHARE"},
		{in: "read=x,write=1", err: "not a number"},
		{in: "read=NaN,write=1", err: "not a number"},
	} {
		m, err := ParseMix(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseMix(%q): %v, want an error with %q", c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("ParseMix(%q): %v", c.in, err)
		case c.err == "" && m.String() != c.want:
			t.Errorf("ParseMix(%q) = %s, want %s", c.in, m, c.want)
		}
	}
}

// Assign gives every role its Counts exactly, spread over the clients,
// the same every time; a role that rounds to no client is refused.
func TestMixAssign(t *testing.T) {
	m, _ := ParseMix("read=0.8,write=0.2")
	roles, err := m.Assign(10)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"read", "read", "write", "read", "read", "read", "read", "write", "read", "read"}; !slices.Equal(roles, want) {
		t.Errorf("Assign(10) = %v, want %v", roles, want)
	}
	for _, n := range []int{1, 7, 100, 1001} {
		m, _ := ParseMix("write=0.5,read=0.3,nested=0.2")
		roles, err := m.Assign(n)
		if n < 5 { // nested: 0.2 x 1 rounds to 0
			if err == nil || !strings.Contains(err.Error(), "gets no client") {
				t.Errorf("Assign(%d): %v, want a role with no client refused", n, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		counts, _ := m.Counts(n)
		sum := 0
		for _, r := range m.Roles() {
			got := 0
			for _, x := range roles {
				if x == r {
					got++
				}
			}
			if got != counts[r] {
				t.Errorf("Assign(%d): %d %s, want %d", n, got, r, counts[r])
			}
			sum += counts[r]
		}
		if sum != n {
			t.Errorf("Counts(%d) sum to %d", n, sum)
		}
		again, _ := m.Assign(n)
		if !slices.Equal(roles, again) {
			t.Errorf("Assign(%d) differs between calls", n)
		}
	}
	m, _ = ParseMix("write=0.5,read=0.3,nested=0.2")
	if c, _ := m.Counts(7); c["write"] != 4 || c["read"] != 2 || c["nested"] != 1 {
		t.Errorf("Counts(7) = %v, want write 4 (3.5), read 2 (2.1), nested 1 (1.4) by the largest remainder", c)
	}
}

// The roles each workload runs: write and nested everywhere, read where
// the workload has a read-only operation.
func TestRolesOf(t *testing.T) {
	if got := RolesOf("flash-sale"); !slices.Equal(got, []string{RoleWrite, RoleNested, RoleRead}) {
		t.Errorf("flash-sale runs %v", got)
	}
	if got := RolesOf("lock-cycle"); slices.Contains(got, RoleRead) {
		t.Errorf("lock-cycle runs %v: it has no read operation", got)
	}
	if RolesOf("no-such") != nil {
		t.Error("an unknown workload runs roles")
	}
}
