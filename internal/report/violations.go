package report

import "encoding/json"

// Violations are safety counts over the whole run; all 0 for a correct lock
// in fault-free conditions. ViolationKinds describes each field; code that
// handles every kind (tables, CSV, charts, exporters) iterates it instead
// of naming the fields.
type Violations struct {
	Oversell    int64 `json:"oversell"`
	Overlap     int64 `json:"overlap"`
	LostUpdates int64 `json:"lost_updates"`
	// StuckLocks are lock keys left with no TTL at the end of the run:
	// nobody will ever release them.
	StuckLocks int64 `json:"stuck_locks"`
	// ForeignReleases are releases that removed a lock the oracle's holder
	// registry says another client held (plain DEL).
	ForeignReleases int64 `json:"foreign_releases"`
	// LostLeases are leases found lost at release: the lock held another
	// token, or the strategy had reported the loss.
	LostLeases int64 `json:"lost_leases"`
	// WorkedAfterLoss are writes completed after the holder had been told
	// its lease was lost.
	WorkedAfterLoss int64 `json:"worked_after_loss"`
	// FalseExtends are extends (strategies.Extender) reported successful
	// after another client had registered as the lock's holder in the
	// oracle's holder registry since the extending holder did
	// (metrics.Oracle.TakenSince), or while the registry named another
	// client as the holder.
	FalseExtends int64 `json:"false_extends"`
	// FalseAcquires are granted acquires after which the lock key did not
	// hold the lease's token (for a hash lock, its field): read right
	// after the grant (--verify-acquire), on the sampled acquires only.
	FalseAcquires int64 `json:"false_acquires,omitempty"`
	// LostAckedWrites are operations the server acknowledged that the
	// final state does not contain (a failover to a lagging replica).
	LostAckedWrites int64 `json:"lost_acked_writes"`
	// CapacityViolations are, for a semaphore of N > 1 permits
	// (raw.permits), the times one lock's holders went from N to N + 1
	// (the safety oracle's count; an episode above N counts once). 0 for
	// an exclusive lock, whose extra holders are overlaps.
	CapacityViolations int64 `json:"capacity_violations"`
	// MaxHolders is, for a semaphore of N > 1 permits, the most holders
	// one lock had at once (the safety oracle's; at most N for a correct
	// semaphore). Absent for an exclusive lock. Combined: the largest of
	// the parts (each process's oracle sees its own clients only). Not a
	// ViolationKind: Total leaves it out.
	MaxHolders *int64 `json:"max_holders,omitempty"`
	// CrossOverlap and CrossOverlapPossible are the cross-process oracle's
	// counts (internal/history.Count), set by lockbench merge from the
	// processes' critical-section histories (history_file): pairs of
	// sections of different processes that overlapped on the same lock by
	// more than (certain) or at most (possible) the two processes' clock
	// uncertainty. Absent (nil) when no history was checked. They are not
	// ViolationKinds: a single process's file never has them, and Total
	// leaves them out.
	CrossOverlap         *int64 `json:"cross_overlap,omitempty"`
	CrossOverlapPossible *int64 `json:"cross_overlap_possible,omitempty"`
	// EndCheck is "not_run" in a follower segment's file: the leading
	// segment ran the run's end checks (the workload's Verify and the
	// stuck-lock check), so the kinds they count (FromEndCheck,
	// FromStuckCheck) are not measured here: absent from the JSON, "-" in
	// the table, "not measured" to a threshold. Empty: they ran.
	EndCheck string `json:"end_check,omitempty"`
}

// EndCheckNotRun is Violations.EndCheck of a follower segment.
const EndCheckNotRun = "not_run"

// Known reports whether v measured kind k: every kind but those of the
// end checks, which a follower segment does not run.
func (k ViolationKind) Known(v Violations) bool {
	return v.EndCheck != EndCheckNotRun || (k.From != FromEndCheck && k.From != FromStuckCheck)
}

// MarshalJSON writes v, without the kinds it did not measure (Known).
func (v Violations) MarshalJSON() ([]byte, error) {
	type plain Violations
	b, err := json.Marshal(plain(v))
	if err != nil || v.EndCheck != EndCheckNotRun {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, k := range ViolationKinds {
		if !k.Known(v) {
			delete(m, k.Key)
		}
	}
	return json.Marshal(m)
}

// ViolationSource is what counts a kind of violation.
type ViolationSource uint8

const (
	// FromEndCheck: the workload's Verify, in its Result.Violations under
	// the kind's Key.
	FromEndCheck ViolationSource = iota
	// FromOracle: the in-process oracle of lock holders, as it runs.
	FromOracle
	// FromClients: the workers, as they run (metrics.Recorder).
	FromClients
	// FromStuckCheck: the engine's look for lock keys with no TTL at the end.
	FromStuckCheck
	// FromCapacity: the in-process oracle's capacity count of a semaphore
	// (metrics.Oracle.SetPermits), read at the end of the run; not counted
	// per client (no role figure).
	FromCapacity
)

// ViolationKind is one kind of safety violation: one field of Violations.
type ViolationKind struct {
	// Key is the field's name in the result file's violations object
	// (its json tag, schema 1), the CSV column and the Prometheus kind
	// label.
	Key string
	// Name is how charts and prose name it ("lost updates").
	Name string
	// Short is its name in the summary table, where width counts.
	Short string
	// Column gives the kind a column of its own in the summary table
	// (headed Short); the other kinds share its "other violations" cell.
	Column bool
	// From is what counts it.
	From ViolationSource
	// Doc is one line: what it counts (results/README.md says more).
	Doc string

	field func(*Violations) *int64
}

// ViolationKinds are the kinds of Violations, in the result file's order.
var ViolationKinds = []ViolationKind{
	{Key: "oversell", Name: "oversell", Short: "oversell", Column: true, From: FromEndCheck,
		Doc:   "orders beyond the stock: Σ max(0, sold − stock) per SKU",
		field: func(v *Violations) *int64 { return &v.Oversell }},
	{Key: "overlap", Name: "overlap", Short: "overlap", Column: true, From: FromOracle,
		Doc:   "times a client entered a critical section another client was still in",
		field: func(v *Violations) *int64 { return &v.Overlap }},
	{Key: "lost_updates", Name: "lost updates", Short: "lost upd", Column: true, From: FromEndCheck,
		Doc:   "updates overwritten by another holder's (flash-sale: Σ sold − (stock − final_stock))",
		field: func(v *Violations) *int64 { return &v.LostUpdates }},
	{Key: "stuck_locks", Name: "stuck", Short: "stuck", From: FromStuckCheck,
		Doc:   "lock keys left with no TTL at the end: nobody will ever release them",
		field: func(v *Violations) *int64 { return &v.StuckLocks }},
	{Key: "foreign_releases", Name: "foreign releases", Short: "foreign rel", From: FromClients,
		Doc:   "releases that removed a lock the holder registry says another client held",
		field: func(v *Violations) *int64 { return &v.ForeignReleases }},
	{Key: "lost_leases", Name: "lost leases", Short: "lost leases", From: FromClients,
		Doc:   "leases found lost at release (another token in the key) or reported lost by the strategy",
		field: func(v *Violations) *int64 { return &v.LostLeases }},
	{Key: "worked_after_loss", Name: "worked after loss", Short: "worked after loss", From: FromClients,
		Doc:   "writes completed after the holder had been told its lease was lost",
		field: func(v *Violations) *int64 { return &v.WorkedAfterLoss }},
	{Key: "false_extends", Name: "false extends", Short: "false ext", From: FromClients,
		Doc:   "extends reported successful after another client had taken the lock since the extending holder acquired it",
		field: func(v *Violations) *int64 { return &v.FalseExtends }},
	{Key: "false_acquires", Name: "false acquires", Short: "false acq", From: FromClients,
		Doc:   "granted acquires after which the lock key did not hold the lease's token (--verify-acquire reads it right after the grant)",
		field: func(v *Violations) *int64 { return &v.FalseAcquires }},
	{Key: "lost_acked_writes", Name: "lost acked writes", Short: "lost acked", From: FromEndCheck,
		Doc:   "operations the server acknowledged that the final state lacks (a failover or a restart lost them)",
		field: func(v *Violations) *int64 { return &v.LostAckedWrites }},
	{Key: "capacity_violations", Name: "capacity violations", Short: "capacity", From: FromCapacity,
		Doc:   "semaphores (N > 1 permits): times one lock's holders went above N (max_holders: the most seen)",
		field: func(v *Violations) *int64 { return &v.CapacityViolations }},
}

// Of returns v's count of kind k.
func (k ViolationKind) Of(v Violations) int64 { return *k.field(&v) }

// Set sets v's count of kind k to n.
func (k ViolationKind) Set(v *Violations, n int64) { *k.field(v) = n }

// Get returns the count of the kind whose Key is key (0 for no such kind).
func (v Violations) Get(key string) int64 {
	for _, k := range ViolationKinds {
		if k.Key == key {
			return k.Of(v)
		}
	}
	return 0
}

// Map returns every kind's count by Key, zeros included.
func (v Violations) Map() map[string]int64 {
	m := make(map[string]int64, len(ViolationKinds))
	for _, k := range ViolationKinds {
		m[k.Key] = k.Of(v)
	}
	return m
}

// Add adds o's counts to v. The end checks count as run when either side
// ran them (the leading segment's file with a follower's).
func (v *Violations) Add(o Violations) {
	if o.EndCheck != EndCheckNotRun {
		v.EndCheck = o.EndCheck
	}
	for _, k := range ViolationKinds {
		k.Set(v, k.Of(*v)+k.Of(o))
	}
	if o.MaxHolders != nil && (v.MaxHolders == nil || *o.MaxHolders > *v.MaxHolders) {
		m := *o.MaxHolders
		v.MaxHolders = &m
	}
}

// Total is the sum of the violation counts.
func (v Violations) Total() int64 {
	var t int64
	for _, k := range ViolationKinds {
		t += k.Of(v)
	}
	return t
}
