package workloads

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/internal/registry"
)

// Client roles (--mix): what each client's operations do with the lock.
// A role belongs to a client for the whole scenario (a fixed share of the
// clients are readers), not to an operation: so a fault can target "a
// reader", and each role's figures are those of its own clients.
const (
	// RoleWrite runs the workload's operation under the exclusive lock
	// (what every client does without --mix).
	RoleWrite = "write"
	// RoleRead runs the workload's read-only operation under the lock's
	// read side (strategies.ReadLocker; flash-sale reads the stock and the
	// orders): readers may hold the lock together, never beside a writer.
	RoleRead = "read"
	// RoleNested runs the workload's operation under the exclusive lock,
	// re-entering it once inside the critical section: the holder acquires
	// the lock it holds again and releases that inner hold before its
	// work, as a nested call does (a reentrant lock, strategies.Reentrant);
	// the lock must stay held until the outer release.
	RoleNested = "nested"
)

// Roles are the client roles, in the order --mix writes them and the
// result file lists them.
var Roles = []string{RoleWrite, RoleRead, RoleNested}

// RoleRunner is implemented by workloads that run a role of their own
// beyond RoleWrite and RoleNested, which every workload taking the lock
// through Worker.Hold runs: Roles lists them (flash-sale: RoleRead, its
// read-only operation). A worker's role is Worker.Role.
type RoleRunner interface {
	Roles() []string
}

// RolesOf lists the roles workload name runs: RoleWrite and RoleNested,
// then its RoleRunner's; nil for an unknown name.
func RolesOf(name string) []string {
	e, ok := reg.Get(name)
	if !ok {
		return nil
	}
	out := []string{RoleWrite, RoleNested}
	if r, ok := e.Value(registry.Defaults(e.Params)).(RoleRunner); ok {
		out = append(out, r.Roles()...)
	}
	return out
}

// Mix is a scenario's client roles (--mix): each role's share of the
// clients, 0 < share <= 1, the shares summing to 1.
type Mix struct {
	// Shares are the roles' shares, by role (Roles).
	Shares map[string]float64
}

// mixTolerance is how far from 1 the shares of a Mix may sum (written
// with a few decimals, 1/3 does not add up exactly).
const mixTolerance = 1e-6

// ParseMix reads --mix's value: comma-separated ROLE=SHARE, ROLE one of
// Roles, SHARE a number in (0, 1] (a percentage with %: read=80%), each
// role at most once, the shares summing to 1 (within 1e-6); e.g.
// read=0.8,write=0.2. Errors name the part refused.
func ParseMix(s string) (Mix, error) {
	m := Mix{Shares: map[string]float64{}}
	if strings.TrimSpace(s) == "" {
		return Mix{}, fmt.Errorf("empty mix (want ROLE=SHARE,..., e.g. read=0.8,write=0.2; roles: %s)", strings.Join(Roles, ", "))
	}
	sum := 0.0
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		role, val, ok := strings.Cut(part, "=")
		role, val = strings.TrimSpace(role), strings.TrimSpace(val)
		if !ok || role == "" || val == "" {
			return Mix{}, fmt.Errorf("%q: want ROLE=SHARE (e.g. read=0.8)", part)
		}
		if !slices.Contains(Roles, role) {
			return Mix{}, fmt.Errorf("unknown role %q (roles: %s)", role, strings.Join(Roles, ", "))
		}
		if _, dup := m.Shares[role]; dup {
			return Mix{}, fmt.Errorf("role %s given twice", role)
		}
		scale := 1.0
		if v, pct := strings.CutSuffix(val, "%"); pct {
			val, scale = v, 0.01
		}
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return Mix{}, fmt.Errorf("%s=%s: the share is not a number", role, val)
		}
		f *= scale
		if f <= 0 || f > 1 {
			return Mix{}, fmt.Errorf("%s=%s: the share must be > 0 and at most 1", role, val)
		}
		m.Shares[role] = f
		sum += f
	}
	if math.Abs(sum-1) > mixTolerance {
		return Mix{}, fmt.Errorf("the shares sum to %s, not 1 (%s)", strconv.FormatFloat(sum, 'f', -1, 64), s)
	}
	return m, nil
}

// String is the mix as ParseMix reads it, roles in Roles' order.
func (m Mix) String() string {
	var parts []string
	for _, r := range m.Roles() {
		parts = append(parts, r+"="+strconv.FormatFloat(m.Shares[r], 'f', -1, 64))
	}
	return strings.Join(parts, ",")
}

// Roles are the mix's roles, in Roles' order.
func (m Mix) Roles() []string {
	var out []string
	for _, r := range Roles {
		if _, ok := m.Shares[r]; ok {
			out = append(out, r)
		}
	}
	return out
}

// Counts are the clients of each role among clients: share x clients,
// rounded by the largest remainder (ties to the role first in Roles), so
// that they sum to clients exactly. Errors: a role of the mix that gets
// no client (its share of clients rounds to 0).
func (m Mix) Counts(clients int) (map[string]int, error) {
	roles := m.Roles()
	counts := map[string]int{}
	left := clients
	type rem struct {
		role string
		frac float64
	}
	var rems []rem
	for _, r := range roles {
		exact := m.Shares[r] * float64(clients)
		n := int(math.Floor(exact + 1e-9))
		counts[r] = n
		left -= n
		rems = append(rems, rem{r, exact - float64(n)})
	}
	slices.SortStableFunc(rems, func(a, b rem) int {
		switch {
		case a.frac > b.frac:
			return -1
		case a.frac < b.frac:
			return 1
		}
		return 0
	})
	for i := 0; left > 0 && len(rems) > 0; i, left = (i+1)%len(rems), left-1 {
		counts[rems[i].role]++
	}
	for _, r := range roles {
		if counts[r] == 0 {
			return nil, fmt.Errorf("--mix %s: role %s gets no client of %d (%s x %d rounds to 0): raise --clients or its share", m, r, clients, strconv.FormatFloat(m.Shares[r], 'f', -1, 64), clients)
		}
	}
	return counts, nil
}

// Assign gives each of clients clients (client numbers 0..clients-1 of
// the whole scenario, every segment's) its role: Counts of each, spread
// evenly over the client numbers by smooth weighted round robin (nginx's:
// each role's weight is its count; a role's clients are as far apart as
// its share allows), so that a client ramp or a segment of the clients
// gets about the mix too. The same mix and clients give the same roles in
// every process. Errors: those of Counts.
func (m Mix) Assign(clients int) ([]string, error) {
	counts, err := m.Counts(clients)
	if err != nil {
		return nil, err
	}
	roles := m.Roles()
	cur := make([]int, len(roles))
	out := make([]string, clients)
	for c := range out {
		best := 0
		for k, r := range roles {
			cur[k] += counts[r]
			if cur[k] > cur[best] {
				best = k
			}
		}
		cur[best] -= clients
		out[c] = roles[best]
	}
	return out, nil
}
