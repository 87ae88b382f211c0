package history

import (
	"fmt"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// Verdicts of Linearize (Lin.Verdict).
const (
	// VerdictOK: Porcupine found a legal linearization of every lock key.
	VerdictOK = "ok"
	// VerdictIllegal: Porcupine found none for at least one lock key: two
	// holders held it at once, beyond the clocks' uncertainty.
	VerdictIllegal = "illegal"
	// VerdictUnknown: no key was illegal, but at least one was not decided
	// (the time budget ran out, or the history was over the size bound).
	VerdictUnknown = "unknown"
)

// Bounds of Linearize's check of one scenario. Porcupine's search is
// exponential in the worst case (many operations whose intervals overlap:
// histories from several hosts, whose clocks are only known to within
// the offset's uncertainty, under a high rate); these keep a merge from
// hanging on it.
const (
	// DefaultLinBudget is the time one scenario's check may take, all lock
	// keys together (porcupine.CheckOperationsTimeout, one key at a time
	// with what is left). Keys not decided by then are unknown.
	DefaultLinBudget = 10 * time.Second
	// DefaultMaxSections is the most critical sections (all processes
	// together; two Porcupine operations each) one scenario's check takes:
	// a larger history is not checked (verdict unknown). Each section
	// costs a few hundred bytes of memory in the check (its operations,
	// Porcupine's entries and list nodes).
	DefaultMaxSections = 100_000
)

// PorcupineVersion is the version of github.com/anishathalye/porcupine
// the check runs (go.mod), for the result's account of it.
const PorcupineVersion = "v1.3.1"

// Lin is the outcome of Linearize on one scenario's histories.
type Lin struct {
	// Verdict is VerdictOK, VerdictIllegal or VerdictUnknown.
	Verdict string
	// Reason says why the verdict is unknown ("" otherwise).
	Reason string
	// Sections are the critical sections of the histories; Operations the
	// Porcupine operations checked (2 per section: an acquire and a
	// release; 0 when over the size bound).
	Sections, Operations int64
	// Locks are the lock keys; IllegalLocks those Porcupine found no
	// linearization for, UnknownLocks those it did not decide.
	Locks, IllegalLocks, UnknownLocks int64
	// OverlapLocks are the lock keys where lockbench's own count of the
	// same histories finds an overlap (see Linearize).
	OverlapLocks int64
	// Disagreements are the decided lock keys where the two disagree:
	// Porcupine illegal and no overlap counted, or ok and one counted.
	Disagreements int64
	// Elapsed is the time the check took.
	Elapsed time.Duration
}

// Linearize checks one scenario's histories (one Part per process and
// file, as Count takes them) with Porcupine (PorcupineModel, per section
// an acquire and a release, each an interval of ± its process's clock
// uncertainty on the clock Count chooses; see PorcupineOperations), one
// lock key at a time, and compares each key's verdict with lockbench's own
// count of the same sections: the key has an overlap when two of its
// sections, not both shared, overlap by more than their processes'
// combined uncertainty — across processes the pairs Count calls Certain,
// and within one process the pairs the in-process oracle would see. A
// pairwise count and a linearization need not agree: three sections that
// overlap pairwise by less than the uncertainty each may have no order
// that separates all three at once (Porcupine illegal, no pair counted);
// Disagreements counts the keys where the two differ, keys Porcupine did
// not decide excepted.
//
// budget bounds the check's time (DefaultLinBudget when <= 0): keys are
// checked in the order of their names, each with the budget left
// (porcupine.CheckOperationsTimeout); a key that times out, and the keys
// not reached, are unknown. maxSections bounds the history (DefaultMaxSections
// when <= 0): over it nothing is checked and the verdict is unknown.
// Errors: Count's.
func Linearize(parts []Part, budget time.Duration, maxSections int) (Lin, error) {
	if budget <= 0 {
		budget = DefaultLinBudget
	}
	if maxSections <= 0 {
		maxSections = DefaultMaxSections
	}
	start := time.Now()
	byKey, _, err := collect(parts)
	if err != nil {
		return Lin{}, err
	}
	var l Lin
	keys := make([]string, 0, len(byKey))
	for k, ss := range byKey {
		keys = append(keys, k)
		l.Sections += int64(len(ss))
	}
	sort.Strings(keys)
	l.Locks = int64(len(keys))
	if l.Sections > int64(maxSections) {
		l.Verdict, l.UnknownLocks = VerdictUnknown, l.Locks
		l.Reason = fmt.Sprintf("not checked: %d critical sections, over the bound of %d", l.Sections, maxSections)
		l.Elapsed = time.Since(start)
		return l, nil
	}
	deadline := start.Add(budget)
	timedOut := false
	for _, k := range keys {
		ss := byKey[k]
		certain, _, same := countKey(ss)
		overlap := certain+same > 0
		if overlap {
			l.OverlapLocks++
		}
		ops := make([]porcupine.Operation, 0, 2*len(ss))
		for _, s := range ss {
			op := LockOp{Key: k, Acquire: true, Shared: s.shared, Proc: s.proc}
			ops = append(ops, porcupine.Operation{ClientId: s.client, Input: op, Call: s.start - s.unc, Return: s.start + s.unc})
			op.Acquire = false
			ops = append(ops, porcupine.Operation{ClientId: s.client, Input: op, Call: s.end - s.unc, Return: s.end + s.unc})
		}
		l.Operations += int64(len(ops))
		left := time.Until(deadline)
		if left <= 0 { // 0 would be no timeout at all
			timedOut = true
			l.UnknownLocks++
			continue
		}
		switch porcupine.CheckOperationsTimeout(PorcupineModel, ops, left) {
		case porcupine.Ok:
			if overlap {
				l.Disagreements++
			}
		case porcupine.Illegal:
			l.IllegalLocks++
			if !overlap {
				l.Disagreements++
			}
		default:
			timedOut = true
			l.UnknownLocks++
		}
	}
	l.Elapsed = time.Since(start)
	switch {
	case l.IllegalLocks > 0:
		l.Verdict = VerdictIllegal
	case l.UnknownLocks > 0:
		l.Verdict = VerdictUnknown
	default:
		l.Verdict = VerdictOK
	}
	if timedOut {
		l.Reason = fmt.Sprintf("the time budget of %s ran out: %d of %d lock keys not decided", budget, l.UnknownLocks, l.Locks)
	}
	return l, nil
}
