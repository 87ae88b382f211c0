package report

import (
	"time"

	"github.com/lockbench/lockbench/internal/history"
)

// Linearizability is Porcupine's verdict on a scenario's critical-section
// histories (internal/history.Linearize: a read-write lock model per lock
// key, github.com/anishathalye/porcupine), beside lockbench's own count
// of overlaps in the same histories, and where the two disagree. Set by
// lockbench merge (and run --procs, lockbench check) from the processes'
// history files; absent when no history was checked.
type Linearizability struct {
	// Checker names the checker and its model.
	Checker string `json:"checker"`
	// Verdict is "ok" (every lock key has a legal order of its acquires
	// and releases), "illegal" (at least one has none: two holders at
	// once, beyond the clocks' uncertainty) or "unknown" (none illegal,
	// some not decided: Reason says why).
	Verdict string `json:"verdict"`
	// Reason says why some lock keys were not decided: the time budget ran
	// out, or the history was over the size bound.
	Reason string `json:"reason,omitempty"`
	// Sections are the critical sections checked, all processes together;
	// Operations the Porcupine operations made of them (an acquire and a
	// release each; 0 when over the size bound).
	Sections   int64 `json:"sections"`
	Operations int64 `json:"operations"`
	// Locks are the lock keys in the histories; IllegalLocks those with
	// no legal order, UnknownLocks those not decided.
	Locks        int64 `json:"locks"`
	IllegalLocks int64 `json:"illegal_locks"`
	UnknownLocks int64 `json:"unknown_locks"`
	// OverlapLocks are the lock keys where lockbench's own count of the
	// same histories finds two sections that overlapped beyond the clocks'
	// uncertainty (across processes: violations.cross_overlap's pairs;
	// within one: the in-process oracle's).
	OverlapLocks int64 `json:"overlap_locks"`
	// OracleDisagreements are the decided lock keys where Porcupine and
	// that count disagree (illegal with no overlap counted, or ok with
	// one); 0 when they agree.
	OracleDisagreements int64 `json:"oracle_disagreements"`
	// BudgetMS is the time the check could take (all lock keys), ms;
	// MaxSections the size bound. ElapsedMS is the time it took, ms.
	BudgetMS    int64   `json:"budget_ms"`
	MaxSections int64   `json:"max_sections"`
	ElapsedMS   float64 `json:"elapsed_ms"`
}

// Checker's text in Linearizability.
const linChecker = "porcupine " + history.PorcupineVersion + ", read-write lock per lock key"

// LinBounds bound the Porcupine check of each scenario (CrossCheck): Budget
// its time, MaxSections its history's size; zero values take
// history.DefaultLinBudget and history.DefaultMaxSections.
type LinBounds struct {
	Budget      time.Duration
	MaxSections int
}

func (b LinBounds) orDefaults() LinBounds {
	if b.Budget <= 0 {
		b.Budget = history.DefaultLinBudget
	}
	if b.MaxSections <= 0 {
		b.MaxSections = history.DefaultMaxSections
	}
	return b
}

// linearize runs history.Linearize on parts within b.
func linearize(parts []history.Part, b LinBounds) (*Linearizability, error) {
	b = b.orDefaults()
	l, err := history.Linearize(parts, b.Budget, b.MaxSections)
	if err != nil {
		return nil, err
	}
	return &Linearizability{Checker: linChecker, Verdict: l.Verdict, Reason: l.Reason,
		Sections: l.Sections, Operations: l.Operations, Locks: l.Locks, IllegalLocks: l.IllegalLocks,
		UnknownLocks: l.UnknownLocks, OverlapLocks: l.OverlapLocks, OracleDisagreements: l.Disagreements,
		BudgetMS: b.Budget.Milliseconds(), MaxSections: int64(b.MaxSections),
		ElapsedMS: float64(l.Elapsed.Microseconds()) / 1000}, nil
}

// combineLin is the check of several results combined (repeats pooled):
// counts and times summed, the worst verdict (illegal, then unknown),
// the first reason; nil (not checked) unless every input was checked.
func combineLin(ss []Scenario) *Linearizability {
	var out *Linearizability
	for _, s := range ss {
		l := s.Linearizability
		if l == nil {
			return nil
		}
		if out == nil {
			c := *l
			out = &c
			continue
		}
		out.Sections += l.Sections
		out.Operations += l.Operations
		out.Locks += l.Locks
		out.IllegalLocks += l.IllegalLocks
		out.UnknownLocks += l.UnknownLocks
		out.OverlapLocks += l.OverlapLocks
		out.OracleDisagreements += l.OracleDisagreements
		out.BudgetMS += l.BudgetMS
		out.ElapsedMS += l.ElapsedMS
		if out.Reason == "" {
			out.Reason = l.Reason
		}
		switch {
		case out.Verdict == history.VerdictIllegal || l.Verdict == history.VerdictIllegal:
			out.Verdict = history.VerdictIllegal
		case out.Verdict == history.VerdictUnknown || l.Verdict == history.VerdictUnknown:
			out.Verdict = history.VerdictUnknown
		}
	}
	return out
}
