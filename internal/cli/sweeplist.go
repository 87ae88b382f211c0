package cli

// lockbench sweep's client counts (--clients N,A..B) and meta.sweep.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/internal/report"
)

// maxSweepCounts bounds the client counts of one sweep.
const maxSweepCounts = 100

// parseClientList reads sweep's --clients: comma-separated items, each a
// count N or a range A..B (x10 steps), A..BxF (x F, F >= 2) or A..B+S
// (+ S, S >= 1) whose last count is B. The result ascends strictly, has 2
// to maxSweepCounts counts, each from 1 to maxClients. Errors name the
// item at fault.
func parseClientList(spec string) ([]int, error) {
	var out []int
	var errs []error
	items := splitList(spec)
	if len(items) == 0 {
		return nil, errors.New("--clients is empty: give two or more client counts, like 1,10,100 or 1..1000")
	}
	for _, it := range items {
		counts, err := parseClientItem(it)
		if err != nil {
			errs = append(errs, fmt.Errorf("--clients %q: %w", it, err))
			continue
		}
		out = append(out, counts...)
		if len(out) > maxSweepCounts {
			return nil, fmt.Errorf("--clients %q gives more than %d counts", spec, maxSweepCounts)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for i := 1; i < len(out); i++ {
		switch {
		case out[i] == out[i-1]:
			return nil, fmt.Errorf("--clients %q has %d twice (for repeated runs of one count use --repeat)", spec, out[i])
		case out[i] < out[i-1]:
			return nil, fmt.Errorf("--clients %q is not ascending (%d after %d): list the counts from the fewest to the most", spec, out[i], out[i-1])
		}
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("--clients %q is one count; a sweep needs two or more (one count is lockbench run --clients %d)", spec, out[0])
	}
	return out, nil
}

// parseClientItem reads one item of parseClientList.
func parseClientItem(it string) ([]int, error) {
	count := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || s[0] == '+' {
			return 0, fmt.Errorf("%q is not a whole number", s)
		}
		if n < 1 || n > maxClients {
			return 0, fmt.Errorf("client counts must be from 1 to %d, got %d", maxClients, n)
		}
		return n, nil
	}
	lo, rest, isRange := strings.Cut(it, "..")
	if !isRange {
		n, err := count(it)
		if err != nil {
			return nil, err
		}
		return []int{n}, nil
	}
	hi, mul, add := rest, 10, 0
	if h, f, ok := strings.Cut(rest, "x"); ok {
		n, err := strconv.Atoi(f)
		if err != nil || n < 2 || f[0] == '+' {
			return nil, fmt.Errorf("the factor after x must be a whole number >= 2, got %q", f)
		}
		hi, mul = h, n
	} else if h, s, ok := strings.Cut(rest, "+"); ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || s == "" || s[0] == '+' || s[0] == '-' {
			return nil, fmt.Errorf("the step after + must be a whole number >= 1, got %q", s)
		}
		hi, mul, add = h, 0, n
	}
	a, err := count(lo)
	if err != nil {
		return nil, err
	}
	b, err := count(hi)
	if err != nil {
		return nil, err
	}
	if a >= b {
		return nil, fmt.Errorf("a range A..B needs A < B, got %d..%d", a, b)
	}
	var out []int
	for n := a; n < b; {
		out = append(out, n)
		if len(out) > maxSweepCounts {
			return nil, fmt.Errorf("more than %d counts", maxSweepCounts)
		}
		if mul > 0 {
			if n > b/mul { // n*mul passes b (and cannot overflow)
				break
			}
			n *= mul
		} else {
			if n > b-add {
				break
			}
			n += add
		}
	}
	return append(out, b), nil
}

// sweepMeta is the meta.sweep of a run of lockbench sweep with counts.
func sweepMeta(f *runFlags, counts []int) *report.Sweep {
	if !f.sweep {
		return nil
	}
	return &report.Sweep{Param: "clients", Spec: f.clientList, Clients: counts}
}
