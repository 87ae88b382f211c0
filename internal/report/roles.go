package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/metrics"
)

// RoleNames are the client roles (--mix), in the order tables list them:
// workloads.Roles (report does not import workloads; a test holds the two
// lists equal).
var RoleNames = []string{"write", "read", "nested"}

// RoleRaw is one client role's raw data (--mix, RoleNames): its clients' counts and histograms, which combine
// exactly (counts summed, histograms merged).
type RoleRaw struct {
	// Clients are the scenario's clients of this role.
	Clients int `json:"clients"`
	// Ops are the operations its clients completed in the measured window
	// (the roles' ops sum to the scenario's).
	Ops int64 `json:"ops"`
	// Hists are its clients' histograms of the measured window, encoded as
	// Raw.Hists are: "op" and "acquire" (granted acquires, retries and
	// waits included). A kind with no value is absent.
	Hists map[string]string `json:"hists,omitempty"`
	// Violations are its clients' safety counts over the whole run
	// (warm-up included, as the scenario's), by violation key: overlap
	// (the oracle's overlaps, each counted on the client whose entry
	// found the conflicting holder inside), foreign_releases,
	// lost_leases, worked_after_loss, false_extends, false_acquires. The
	// kinds only the end checks count (oversell, lost updates, stuck
	// locks) belong to no client and are not here.
	Violations map[string]int64 `json:"violations"`
}

// RoleViolationKinds are the violation keys a role counts (RoleRaw.
// Violations): those the oracle and the clients count as they run.
func RoleViolationKinds() []string {
	var out []string
	for _, k := range ViolationKinds {
		if k.From == FromOracle || k.From == FromClients {
			out = append(out, k.Key)
		}
	}
	return out
}

// Role is one client role's figures, derived from its RoleRaw (Derive).
type Role struct {
	Clients int `json:"clients"`
	// Ops and OpsPerSec are its clients' completed operations in the
	// measured window, and per second of it.
	Ops       int64   `json:"ops"`
	OpsPerSec float64 `json:"ops_per_sec"`
	// LatencyMS and AcquireMS summarise its op and acquire histograms;
	// absent without a value.
	LatencyMS metrics.Latency `json:"latency_ms,omitzero"`
	AcquireMS metrics.Latency `json:"acquire_ms,omitzero"`
	// Violations are its counts by kind (RoleRaw.Violations) and
	// ViolationsTotal their sum.
	Violations      map[string]int64 `json:"violations"`
	ViolationsTotal int64            `json:"violations_total"`
}

// deriveRoles derives each role's figures (nil without roles).
func deriveRoles(rs map[string]*RoleRaw, windowS float64) (map[string]Role, error) {
	if rs == nil {
		return nil, nil
	}
	out := map[string]Role{}
	for name, r := range rs {
		ro := Role{Clients: r.Clients, Ops: r.Ops, Violations: maps.Clone(r.Violations)}
		if ro.Violations == nil {
			ro.Violations = map[string]int64{}
		}
		if windowS > 0 {
			ro.OpsPerSec = float64(r.Ops) / windowS
		}
		for k, dst := range map[string]*metrics.Latency{HistOp: &ro.LatencyMS, HistAcquire: &ro.AcquireMS} {
			h, err := r.hist(k)
			if err != nil {
				return nil, fmt.Errorf("raw.roles.%s.hists.%s: %w", name, k, err)
			}
			*dst = metrics.Summarize(h)
		}
		for _, v := range r.Violations {
			ro.ViolationsTotal += v
		}
		out[name] = ro
	}
	return out, nil
}

// hist decodes r's histogram of kind; nil when absent.
func (r *RoleRaw) hist(kind string) (*hdrhistogram.Histogram, error) {
	e := r.Hists[kind]
	if e == "" {
		return nil, nil
	}
	return hdrhistogram.Decode([]byte(e))
}

// cloneRoles is a deep copy of rs (nil for nil).
func cloneRoles(rs map[string]*RoleRaw) map[string]*RoleRaw {
	if rs == nil {
		return nil
	}
	out := map[string]*RoleRaw{}
	for k, r := range rs {
		c := *r
		c.Hists, c.Violations = maps.Clone(r.Hists), maps.Clone(r.Violations)
		out[k] = &c
	}
	return out
}

// addRoles combines two inputs' roles: nil (not measured per role) unless
// both have them. Counts add up, histograms merge; Concurrent inputs (the
// segments of one run, each with its own clients) add their clients,
// Sequential ones (repeats, the same clients) keep the most. Errors: a
// histogram that does not decode.
func addRoles(a, b map[string]*RoleRaw, mode Mode) (map[string]*RoleRaw, error) {
	if a == nil || b == nil {
		return nil, nil
	}
	for name, y := range b {
		x, ok := a[name]
		if !ok {
			c := cloneRoles(map[string]*RoleRaw{name: y})[name]
			a[name] = c
			continue
		}
		switch mode {
		case Concurrent:
			x.Clients += y.Clients
		case Sequential:
			x.Clients = max(x.Clients, y.Clients)
		}
		x.Ops += y.Ops
		for k, v := range y.Violations {
			if x.Violations == nil {
				x.Violations = map[string]int64{}
			}
			x.Violations[k] += v
		}
		for k := range y.Hists {
			hx, err := x.hist(k)
			if err != nil {
				return nil, fmt.Errorf("raw.roles.%s.hists.%s: %w", name, k, err)
			}
			hy, err := y.hist(k)
			if err != nil {
				return nil, fmt.Errorf("raw.roles.%s.hists.%s: %w", name, k, err)
			}
			if hx == nil {
				hx = hy
			} else if hy != nil {
				hx.Merge(hy)
			}
			if x.Hists == nil {
				x.Hists = map[string]string{}
			}
			if e := EncodeHist(hx); e != "" {
				x.Hists[k] = e
			}
		}
	}
	return a, nil
}

// RoleLines writes one line per scenario that ran client roles (--mix),
// for after the table: its name, then per role its clients, ops/s, the
// acquire wait's p50 and p99 and its violations (by kind when any).
// Nothing when no scenario ran roles.
func RoleLines(w io.Writer, ss []Scenario) error {
	for _, s := range ss {
		if len(s.Roles) == 0 {
			continue
		}
		names := slices.Sorted(maps.Keys(s.Roles))
		slices.SortStableFunc(names, func(a, b string) int {
			return orderOf(RoleNames, a) - orderOf(RoleNames, b)
		})
		var parts []string
		for _, name := range names {
			r := s.Roles[name]
			p := fmt.Sprintf("%s %d %s %.0f ops/s", name, r.Clients, plural(r.Clients, "client", "clients"), r.OpsPerSec)
			if l := r.AcquireMS; l.Count > 0 {
				p += fmt.Sprintf(", acquire p50 %s ms p99 %s ms", FormatMS(l.P50), FormatMS(l.P99))
			}
			p += fmt.Sprintf(", violations %d", r.ViolationsTotal)
			if r.ViolationsTotal > 0 {
				var kinds []string
				for _, k := range RoleViolationKinds() {
					if v := r.Violations[k]; v > 0 {
						kinds = append(kinds, fmt.Sprintf("%s %d", k, v))
					}
				}
				p += " (" + strings.Join(kinds, ", ") + ")"
			}
			parts = append(parts, p)
		}
		if _, err := fmt.Fprintf(w, "roles (%s): %s\n", s.Name(), strings.Join(parts, "; ")); err != nil {
			return err
		}
	}
	return nil
}

// orderOf is name's index in order, or len(order) when absent.
func orderOf(order []string, name string) int {
	if i := slices.Index(order, name); i >= 0 {
		return i
	}
	return len(order)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
