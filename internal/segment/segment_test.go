package segment

import (
	"strings"
	"testing"
)

// The N shares of C clients sum to C, differ by at most one, the first C
// mod N get the extra one, and the offsets tile 0..C-1 without a gap.
func TestSharesSumToClients(t *testing.T) {
	for n := 1; n <= 12; n++ {
		for c := 0; c <= 40; c++ {
			sum, lo, hi := 0, c, 0
			for i := 1; i <= n; i++ {
				s := Segment{Index: i, Count: n}
				if got := Offset(c, s); got != sum {
					t.Fatalf("C=%d N=%d segment %d: offset %d, want %d", c, n, i, got, sum)
				}
				sh := Share(c, s)
				sum += sh
				lo, hi = min(lo, sh), max(hi, sh)
			}
			if sum != c {
				t.Fatalf("C=%d N=%d: shares sum to %d", c, n, sum)
			}
			if c > 0 && hi-lo > 1 {
				t.Fatalf("C=%d N=%d: shares from %d to %d", c, n, lo, hi)
			}
			if c > 0 && Share(c, Segment{1, n}) < 1 {
				t.Fatalf("C=%d N=%d: the leader has no client", c, n)
			}
		}
	}
}

// Exact shares: 10 clients over 3 segments are 4, 3, 3 (offsets 0, 4,
// 7); 2 over 4 are 1, 1, 0, 0; the rate is split evenly.
func TestExactShares(t *testing.T) {
	for _, tc := range []struct {
		c, n         int
		shares, offs []int
	}{
		{10, 3, []int{4, 3, 3}, []int{0, 4, 7}},
		{2, 4, []int{1, 1, 0, 0}, []int{0, 1, 2, 2}},
		{8, 4, []int{2, 2, 2, 2}, []int{0, 2, 4, 6}},
		{50, 1, []int{50}, []int{0}},
	} {
		for i := range tc.shares {
			s := Segment{Index: i + 1, Count: tc.n}
			if got := Share(tc.c, s); got != tc.shares[i] {
				t.Errorf("Share(%d, %v) = %d, want %d", tc.c, s, got, tc.shares[i])
			}
			if got := Offset(tc.c, s); got != tc.offs[i] {
				t.Errorf("Offset(%d, %v) = %d, want %d", tc.c, s, got, tc.offs[i])
			}
		}
	}
	var sum float64
	for i := 1; i <= 4; i++ {
		r := Rate(1000, Segment{Index: i, Count: 4})
		if r != 250 {
			t.Errorf("Rate(1000, %d/4) = %v, want 250", i, r)
		}
		sum += r
	}
	if sum != 1000 {
		t.Errorf("rates sum to %v, want 1000", sum)
	}
}

func TestParse(t *testing.T) {
	if s, err := Parse("2/4"); err != nil || s != (Segment{2, 4}) {
		t.Fatalf("Parse(2/4) = %v, %v", s, err)
	}
	for _, bad := range []string{"", "2", "0/4", "5/4", "1/0", "a/b", "2/-1", "+1/2", "1/2/3"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
	if s, err := FromIndex("0", 3); err != nil || s != (Segment{1, 3}) {
		t.Fatalf("FromIndex(0, 3) = %v, %v", s, err)
	}
	if _, err := FromIndex("3", 3); err == nil || !strings.Contains(err.Error(), "JOB_COMPLETION_INDEX 3") {
		t.Fatalf("FromIndex(3, 3): %v", err)
	}
}
