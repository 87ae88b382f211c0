package history

import (
	"fmt"
	"sort"
	"strconv"
	"time"
)

// Part is one process's history of one scenario: the file's header and
// the file's records of that scenario (several when it was repeated).
type Part struct {
	Header    Header
	Scenarios []*Scenario
}

// Counts are the cross-process overlaps of one scenario (Count).
type Counts struct {
	// Certain are pairs of sections whose overlap is longer than the
	// combined uncertainty of their processes' clocks; Possible those
	// that overlap by that much or less.
	Certain, Possible int64
	// Histories is the number of parts; Processes the number of distinct
	// processes among them (Header.Proc).
	Histories, Processes int
	// SameClock is true when every part came from one host name and boot
	// id: the entries were compared on the host's CLOCK_MONOTONIC.
	SameClock bool
	// Hosts is the number of distinct (host name, boot id) pairs.
	Hosts int
	// MaxUncertainty is the largest uncertainty of one process's clock
	// (the Redis offset's, or the CLOCK_MONOTONIC link's with SameClock).
	MaxUncertainty time.Duration
}

// Text is the one-line account of how the counts were made, for the
// result's cross_check: "4 histories, same host: exact" or "3 histories
// on 2 hosts: offset uncertainty up to 0.30 ms".
func (c Counts) Text() string {
	switch {
	case c.SameClock && c.MaxUncertainty == 0:
		return fmt.Sprintf("%d histories, same host: exact", c.Histories)
	case c.SameClock:
		return fmt.Sprintf("%d histories, same host: exact to %s (clock link)", c.Histories, c.MaxUncertainty)
	}
	return fmt.Sprintf("%d histories on %d hosts: offset uncertainty up to %.2f ms", c.Histories, c.Hosts,
		float64(c.MaxUncertainty)/float64(time.Millisecond))
}

// section is an entry on the common clock.
type section struct {
	start, end int64
	unc        int64 // its process's clock uncertainty, ns
	proc       int
	client     int // proc<<16 + the entry's client: Porcupine's ClientId
	shared     bool
}

// Count counts the pairs of critical sections of different processes
// that overlapped on the same lock key, in the histories of one scenario
// from several processes (one Part per process and file).
//
// Every entry is put on one clock: when every part comes from the same
// host name and boot id, the host's CLOCK_MONOTONIC (process time +
// Header.MonoBaseNS; uncertainty Header.MonoErrNS, the link's, 0 in files
// built by hand: the count is then exact); otherwise the Redis server's
// (process time + Scenario.OffsetNS; uncertainty Scenario.UncertaintyNS).
//
// What is counted: each unordered pair {A, B} of sections with the same
// lock key, from different processes (Header.Proc), not both shared
// (read-side sections of a read-write lock may overlap one another),
// whose intervals [Enter, Leave) overlap by d > 0 — once, however many
// other sections each also overlaps. The pair is Certain when d >
// uA + uB (the two processes' uncertainties), Possible when 0 < d ≤
// uA + uB. Sections that merely touch (d = 0), and gaps shorter than the
// uncertainty, are not counted. Pairs within one process are the
// in-process oracle's (violations.overlap) and are not counted here.
//
// Errors: no parts, or (when the parts are not on one host) a record
// whose clock offset was not measured.
func Count(parts []Part) (Counts, error) {
	byKey, c, err := collect(parts)
	if err != nil {
		return c, err
	}
	for _, ss := range byKey {
		certain, possible, _ := countKey(ss)
		c.Certain += certain
		c.Possible += possible
	}
	return c, nil
}

// collect puts every entry of parts on one clock (see Count) and groups
// them by lock key; the Counts it returns have everything but Certain and
// Possible. Errors: Count's.
func collect(parts []Part) (map[string][]section, Counts, error) {
	var c Counts
	if len(parts) == 0 {
		return nil, c, fmt.Errorf("history: no histories to check")
	}
	c.Histories = len(parts)
	hosts := map[string]bool{}
	procs := map[string]int{}
	same := true
	for _, p := range parts {
		h := p.Header
		hosts[h.Host+"\x00"+h.BootID] = true
		if h.Host == "" || h.BootID == "" || h.Host != parts[0].Header.Host || h.BootID != parts[0].Header.BootID {
			same = false
		}
	}
	c.Hosts, c.SameClock = len(hosts), same
	byKey := map[string][]section{}
	for i, p := range parts {
		id := p.Header.Proc
		if id == "" {
			id = "#" + strconv.Itoa(i)
		}
		proc, ok := procs[id]
		if !ok {
			proc = len(procs)
			procs[id] = proc
		}
		for _, s := range p.Scenarios {
			base, unc := p.Header.MonoBaseNS, p.Header.MonoErrNS
			if !same {
				if !s.Measured {
					return nil, c, fmt.Errorf("history: process %s (segment %d, host %s), scenario %s: no clock offset to the Redis server was measured; histories from several hosts cannot be compared without it",
						id, p.Header.Segment, p.Header.Host, s.Name)
				}
				base, unc = s.OffsetNS, s.UncertaintyNS
			}
			c.MaxUncertainty = max(c.MaxUncertainty, time.Duration(unc))
			for _, e := range s.Entries {
				byKey[e.Key] = append(byKey[e.Key], section{start: e.Enter + base, end: e.Leave + base, unc: unc, proc: proc,
					client: proc<<16 + int(e.Client), shared: e.Shared})
			}
		}
	}
	c.Processes = len(procs)
	return byKey, c, nil
}

// countKey counts one lock's overlapping pairs (see Count): a sweep over
// the sections by start, keeping those not yet ended. same are the pairs
// within one process (not both shared) that overlap by more than twice
// its uncertainty, which Count leaves to the in-process oracle and
// Linearize compares with Porcupine.
func countKey(ss []section) (certain, possible, same int64) {
	sort.Slice(ss, func(i, j int) bool { return ss[i].start < ss[j].start })
	var active []section
	for _, x := range ss {
		keep := active[:0]
		for _, a := range active {
			if a.end > x.start {
				keep = append(keep, a)
			}
		}
		active = keep
		for _, a := range active {
			if a.shared && x.shared {
				continue
			}
			d := min(a.end, x.end) - x.start // a.start <= x.start < a.end
			if d <= 0 {
				continue
			}
			if a.proc == x.proc {
				if d > a.unc+x.unc {
					same++
				}
				continue
			}
			if d > a.unc+x.unc {
				certain++
			} else {
				possible++
			}
		}
		active = append(active, x)
	}
	return certain, possible, same
}
