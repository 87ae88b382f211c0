package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"

	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Column is one column of a summary table (Table, SweepTable): its name
// for --columns, its header and how a scenario's cell reads.
type Column struct {
	// Key names the column in --columns (ops, p99, lost_updates).
	Key string
	// Header heads the column in the table.
	Header string
	// Doc is one line: what the cell shows.
	Doc  string
	cell func(Scenario) string
	// clientBound: the cell marks a client-bound figure with "*", and the
	// table then ends with the footnote that explains it.
	clientBound bool
}

// clientBoundNote is the footnote of a table whose ops/s carries a "*".
const clientBoundNote = "* client-bound: lockbench used over 90% of its CPU budget; that figure may measure the client, not Redis"

// FormatRate is a rate (ops/s) as the tables print it: whole from 10 up,
// with two decimals below (a 1-operation 3 s run reads 0.33, not 0), and
// 0 as "0".
func FormatRate(v float64) string {
	if v == 0 || v >= 9.995 { // 9.996 reads 10, not 10.00
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// opsCell is ops/s with "*" when the client was the bound.
func opsCell(s Scenario) string {
	ops := FormatRate(s.OpsPerSec)
	if s.ClientCPU.ClientBound {
		ops += "*"
	}
	return ops
}

// msCell is v (ms) of latency l as the table prints it, "-" when l has no
// value (nothing measured).
func msCell(l metrics.Latency, v float64) string {
	if !LatencyMeasured(l) {
		return "-"
	}
	return FormatMS(v)
}

// LatencyMeasured reports whether l holds values: a latency without any
// is zero throughout (absent from the JSON), never a measured 0.
func LatencyMeasured(l metrics.Latency) bool { return l != metrics.Latency{} }

// Cell is the column's text for s, as the table shows it.
func (c Column) Cell(s Scenario) string { return c.cell(s) }

func col(key, header, doc string, cell func(Scenario) string) Column {
	return Column{Key: key, Header: header, Doc: doc, cell: cell}
}

// Shared columns of the run and sweep tables.
var (
	colStrategy = col("strategy", "strategy", "the lock strategy (after the scenario's name and a colon when it has one: a scenario file's scenarios: list)", func(s Scenario) string {
		if s.Label != "" {
			return s.Label + ": " + s.Strategy
		}
		return s.Strategy
	})
	colDriver   = col("driver", "driver", "the Redis driver", func(s Scenario) string { return s.Driver })
	colWorkload = col("workload", "workload", "the workload", func(s Scenario) string { return s.Workload })
	colRetry    = col("retry", "retry", "the retry policy's name (its whole spec where two rows of one strategy, driver and workload share the name; the parameters are in the result file)", func(s Scenario) string { return shortRetry(s.Retry) })
	colOps      = Column{Key: "ops", Header: "ops/s", Doc: "operations per second in the measured window (* client-bound)", cell: opsCell, clientBound: true}
	colCeiling  = col("ceiling", "ceiling", "the lock-bound ceiling, ops/s (- when there is none)", func(s Scenario) string {
		if !s.HasCeiling() {
			return "-" // no lock held (a lock-free strategy), a hold too short to bound, or nothing measured
		}
		return FormatRate(s.CeilingOpsPerSec)
	})
	colJain = col("jain", "jain", "Jain's fairness index over the clients' operations (- without operations, and with a client ramp)", func(s Scenario) string {
		if !s.HasJain() {
			return "-"
		}
		return fmt.Sprintf("%.2f", s.Fairness.JainIndex)
	})
	colP50        = col("p50", "p50 ms", "operation latency p50, ms (- without values)", func(s Scenario) string { return msCell(s.LatencyMS, s.LatencyMS.P50) })
	colP99        = col("p99", "p99 ms", "operation latency p99, ms (- without values)", func(s Scenario) string { return msCell(s.LatencyMS, s.LatencyMS.P99) })
	colP999       = col("p999", "p99.9 ms", "operation latency p99.9, ms (- without values)", func(s Scenario) string { return msCell(s.LatencyMS, s.LatencyMS.P999) })
	colMax        = col("max", "max ms", "operation latency max, ms (- without values)", func(s Scenario) string { return msCell(s.LatencyMS, s.LatencyMS.Max) })
	colAcquireP99 = col("acquire_p99", "acquire p99 ms", "acquire wait p99, ms (- without values)", func(s Scenario) string { return msCell(s.AcquireMS, s.AcquireMS.P99) })
	colReleaseP99 = col("release_p99", "release p99 ms", "release call p99, ms (- without values)", func(s Scenario) string { return msCell(s.ReleaseMS, s.ReleaseMS.P99) })
	colReleaseMax = col("release_max", "release max ms", "release call max, ms (- without values)", func(s Scenario) string { return msCell(s.ReleaseMS, s.ReleaseMS.Max) })
	colErrors     = col("errors", "errors", "errors, acquire timeouts and give-ups: the total, the kinds in brackets", func(s Scenario) string { return errorCell(s.Counters) })
	colViolations = col("violations", "violations", "every violation kind summed (the liveness figures are not violations)", func(s Scenario) string {
		return strconv.FormatInt(s.Violations.Total(), 10)
	})
	colCmds = col("cmds_per_op", "cmds/op", "Redis commands per operation (- when not counted)", func(s Scenario) string {
		if s.RedisCost.CommandsPerOp > 0 {
			return fmt.Sprintf("%.2f", s.RedisCost.CommandsPerOp)
		}
		return "-"
	})
	colEfficiency = col("efficiency", "efficiency", "ops/s / the ceiling (- when there is none)", func(s Scenario) string {
		if s.HasCeiling() {
			return fmt.Sprintf("%.2f", s.Efficiency)
		}
		return "-"
	})
)

// TableColumns are the columns of the run table (Table), in order:
// strategy, driver, workload, retry, clients, ops/s, ceiling, p50, p99,
// p99.9 and max ms, jain, a column per violation kind with Column set
// (oversell, overlap, lost_updates), other violations and errors. Those
// are the full table; the extra columns (TableExtras) are shown only
// when --columns names them.
func TableColumns() []Column {
	cols := []Column{colStrategy, colDriver, colWorkload, colRetry,
		col("clients", "clients", "clients; in an open loop also the offered rate and the arrivals dropped", func(s Scenario) string {
			clients := strconv.Itoa(s.Clients)
			if s.Loop == "open" {
				clients += fmt.Sprintf(" @%g/s", s.OfferedRate)
				if s.Dropped > 0 {
					clients += fmt.Sprintf(" (%d dropped)", s.Dropped)
				}
			}
			return clients
		}),
		colOps, colCeiling, colP50, colP99, colP999, colMax, colJain}
	for _, k := range ViolationKinds {
		if k.Column {
			cols = append(cols, col(k.Key, k.Short, k.Doc, func(s Scenario) string {
				if !k.Known(s.Violations) {
					return "-" // a follower segment: the leader ran the end check
				}
				return strconv.FormatInt(k.Of(s.Violations), 10)
			}))
		}
	}
	return append(cols,
		col("other", "other violations", "the other violation kinds, the liveness figures, the slow and hung releases, the grants out of FIFO order and the late renewals that are not zero, and Porcupine's verdict when it is not ok", otherCellOf),
		colErrors)
}

// TableExtras are the run table's columns outside the full table, for
// --columns: every violation kind summed, the acquire wait's p99, the
// release call's p99 and max, commands per operation, efficiency, the
// hand-over gap's p50 and p99, the hand-over idle share, the grants
// out of FIFO order, Porcupine's verdict (linearizable), the renewal
// margin's minimum and p1, the orphan shares, the separate resource's
// refusals, and the transfer workload's balance drift.
func TableExtras() []Column {
	return []Column{colViolations, colAcquireP99, colReleaseP99, colReleaseMax, colCmds, colEfficiency, colHandoverP50, colHandoverP99, colIdleShare, colFIFO, colLinearizable, colMarginMin, colMarginP1, colOrphanShares, colResourceRejected, colBalanceDrift}
}

// The renewal-margin columns (Scenario.RenewalMargin): "-" for a strategy
// that does not renew, or without renewals.
var (
	colMarginMin = col("margin_min", "margin min ms", "renewal margin minimum: the least TTL a lease had left at one of its renewals, ms, and the late renewals (under TTL/3) when any (- without renewals)", func(s Scenario) string {
		m := s.RenewalMargin
		if m == nil || m.MinMS == nil {
			return "-"
		}
		if m.LateRenewals > 0 {
			return FormatMS(*m.MinMS) + " (" + strconv.FormatInt(m.LateRenewals, 10) + " late)"
		}
		return FormatMS(*m.MinMS)
	})
	colMarginP1 = col("margin_p1", "margin p1 ms", "renewal margin p1, ms, and its trend (the second half of the window's p1 minus the first's) when both halves renewed (- without renewals)", func(s Scenario) string {
		m := s.RenewalMargin
		if m == nil || m.P1MS == nil {
			return "-"
		}
		if t := m.TrendMS; t != nil {
			sign := "+"
			if *t < 0 {
				sign = "-"
			}
			return FormatMS(*m.P1MS) + " (" + sign + FormatMS(math.Abs(*t)) + ")"
		}
		return FormatMS(*m.P1MS)
	})
)

// The hand-over columns (Scenario.Handover): "-" when not measured.
var (
	colHandoverP50 = col("handover_p50", "hand-over p50 ms", "hand-over gap p50: a lock's freeing to its next grant while a client waited, ms (- when not measured or no client waited)", func(s Scenario) string {
		if s.Handover == nil || s.Handover.GapMS == nil {
			return "-"
		}
		return FormatMS(s.Handover.GapMS.P50)
	})
	colHandoverP99 = col("handover_p99", "hand-over p99 ms", "hand-over gap p99, ms (- as handover_p50)", func(s Scenario) string {
		if s.Handover == nil || s.Handover.GapMS == nil {
			return "-"
		}
		return FormatMS(s.Handover.GapMS.P99)
	})
	colIdleShare = col("idle_share", "idle share", "hand-over idle share: the time locks stood free while wanted over the window times the locks (- when not measured)", func(s Scenario) string {
		if s.Handover == nil {
			return "-"
		}
		return fmt.Sprintf("%.3f", s.Handover.IdleShare)
	})
	colFIFO = col("fifo_violations", "fifo violations", "grants out of arrival order, and the longest wait in turns, for a lock that declares FIFO (- otherwise)", func(s Scenario) string {
		h := s.Handover
		if h == nil || h.FIFOViolations == nil {
			return "-"
		}
		return fmt.Sprintf("%d (max %d turns)", *h.FIFOViolations, *h.MaxWaitTurns)
	})
)

// colOrphanShares is the liveness oracle's orphan shares and the oldest
// one's age: "-" when the oracle did not tell orphans (off, or liveness
// n/a).
var colOrphanShares = col("orphan_shares", "orphan shares", "dead owners' shares of multi-owner locks kept past 2 x the TTL beside a live owner's, and the oldest one's age from its owner's death, ms (- when the liveness oracle did not measure)", func(s Scenario) string {
	l := s.Liveness
	if l == nil || !l.Measured {
		return "-"
	}
	if l.OrphanShares == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (max %s ms)", l.OrphanShares, FormatMS(l.OrphanShareAgeMS.Max))
})

// otherCellOf is the "other violations" cell of s: otherCell, the grants
// out of FIFO order and the late renewals when there are any, and
// Porcupine's verdict when it is not ok or disagrees with the overlap
// count (linCell).
func otherCellOf(s Scenario) string {
	c := otherCell(s.Violations, s.Liveness, s.SlowReleases, s.Counters.HungReleases)
	if h := s.Handover; h != nil && h.FIFOViolations != nil && *h.FIFOViolations != 0 {
		c = joinCell(c, "out of fifo order "+strconv.FormatInt(*h.FIFOViolations, 10))
	}
	if m := s.RenewalMargin; m != nil && m.LateRenewals != 0 {
		c = joinCell(c, "late renew "+strconv.FormatInt(m.LateRenewals, 10))
	}
	if l := s.Linearizability; l != nil && (l.Verdict != "ok" || l.OracleDisagreements != 0) {
		c = joinCell(c, "porcupine "+linCell(s))
	}
	return c
}

// linCell is Porcupine's verdict on s's histories as the linearizable
// column shows it: "ok", "illegal (N of M locks)" or "unknown", then
// ", N disagree" when it and lockbench's overlap count disagree on N lock
// keys; "-" when no history was checked.
func linCell(s Scenario) string {
	l := s.Linearizability
	if l == nil {
		return "-"
	}
	c := l.Verdict
	if l.Verdict == "illegal" {
		c += fmt.Sprintf(" (%d of %d locks)", l.IllegalLocks, l.Locks)
	}
	if l.OracleDisagreements != 0 {
		c += fmt.Sprintf(", %d disagree", l.OracleDisagreements)
	}
	return c
}

// colLinearizable is Porcupine's verdict (linCell).
var colLinearizable = col("linearizable", "linearizable", "Porcupine's verdict on the processes' histories (ok, illegal with the lock keys, unknown) and the lock keys where lockbench's overlap count disagrees (- without histories)", linCell)

// joinCell appends part to an other-violations cell c ("0": empty).
func joinCell(c, part string) string {
	if c == "0" {
		return part
	}
	return c + ", " + part
}

// CompactColumns are the run table's columns on a terminal too narrow
// for the full table: strategy, driver, workload, retry, clients, ops/s,
// p50 and p99 ms, violations (every kind summed) and errors; FoldColumns
// those of them that a table still too wide shows in one line instead
// when every row has the same value.
var CompactColumns = []string{"strategy", "driver", "workload", "retry", "clients", "ops", "p50", "p99", "violations", "errors"}

// FoldColumns are the compact table's columns that name the scenario
// (never a figure), in the order a "every row:" line names them.
var FoldColumns = []string{"strategy", "driver", "workload", "retry", "clients"}

// SweepColumns are the columns of the sweep table (SweepTable), in
// order: strategy, driver, workload, retry, clients, ops/s, ceiling,
// efficiency, jain, acquire p99 ms, p99 ms, cmds/op, violations and
// errors; SweepExtras those shown only when --columns names them.
func SweepColumns() []Column {
	return []Column{colStrategy, colDriver, colWorkload, colRetry,
		col("clients", "clients", "clients", func(s Scenario) string { return strconv.Itoa(s.Clients) }),
		colOps, colCeiling, colEfficiency, colJain, colAcquireP99, colP99, colCmds,
		col("violations", "violations", "every violation kind that is not zero, by name (0: none)", func(s Scenario) string { return violationsCell(s.Violations) }),
		colErrors}
}

// SweepExtras are the sweep table's columns outside its full table.
func SweepExtras() []Column {
	return []Column{colP50, colP999, colMax}
}

// SweepCompactColumns are the sweep table's columns on a narrow terminal.
var SweepCompactColumns = []string{"strategy", "driver", "workload", "retry", "clients", "ops", "p99", "violations", "errors"}

// violationsCell names every non-zero violation count by its kind's Short
// name ("overlap 3, lost upd 1"); "0" when there is none.
func violationsCell(v Violations) string {
	var parts []string
	for _, k := range ViolationKinds {
		if n := k.Of(v); n != 0 {
			parts = append(parts, k.Short+" "+strconv.FormatInt(n, 10))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ", ")
}

// SelectColumns picks, by key, from full and then extra: "all" (or an
// empty list) is full. Errors: a key that is neither, with the valid ones.
func SelectColumns(full, extra []Column, keys []string) ([]Column, error) {
	if len(keys) == 0 || len(keys) == 1 && keys[0] == "all" {
		return full, nil
	}
	all := append(slices.Clone(full), extra...)
	var bad []string
	var cols []Column
	for _, k := range keys {
		k = strings.TrimSpace(k)
		i := slices.IndexFunc(all, func(c Column) bool { return c.Key == k })
		if i < 0 {
			bad = append(bad, strconv.Quote(k))
			continue
		}
		cols = append(cols, all[i])
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("unknown column %s (valid: all, %s)", strings.Join(bad, ", "), strings.Join(ColumnKeys(all), ", "))
	}
	return cols, nil
}

// ColumnKeys are the keys of cols, in order.
func ColumnKeys(cols []Column) []string {
	keys := make([]string, len(cols))
	for i, c := range cols {
		keys[i] = c.Key
	}
	return keys
}

// writeTable renders scenarios as a table of cols with tablewriter
// (markdown: its GitHub-flavoured markdown renderer), then the
// client-bound footnote when a shown cell carries its "*". Rows come in
// the scenarios' order.
func writeTable(w io.Writer, cols []Column, scenarios []Scenario, markdown bool) (bound bool, err error) {
	opts := []tablewriter.Option{tablewriter.WithHeaderAutoFormat(tw.Off)}
	if markdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	t := tablewriter.NewTable(w, opts...)
	header := make([]any, len(cols))
	for i, c := range cols {
		header[i] = c.Header
	}
	t.Header(header...)
	// The retry column shows a policy's name, or its whole spec where the
	// name stands for two specs among the rows of one strategy, driver and
	// workload (CellNames), so that no two such rows read alike.
	labels := CellNames(scenarios)
	for k, s := range scenarios {
		row := make([]any, len(cols))
		for i, c := range cols {
			row[i] = c.cell(s)
			if c.Key == "retry" && labels[k] != s.Name() {
				row[i] = s.Retry
			}
			if c.clientBound && s.ClientCPU.ClientBound {
				bound = true
			}
		}
		if err := t.Append(row...); err != nil {
			return false, err
		}
	}
	return bound, t.Render()
}

// TableOf is Table with the columns cols (TableColumns, TableExtras,
// SelectColumns).
func TableOf(w io.Writer, scenarios []Scenario, cols []Column) error {
	bound, err := writeTable(w, cols, scenarios, false)
	if err != nil {
		return err
	}
	if bound {
		_, err = fmt.Fprintln(w, clientBoundNote)
	}
	return err
}

// SweepTableOf is SweepTable with the columns cols (SweepColumns,
// SweepExtras, SelectColumns): the table, in the cells' order, then each
// cell's peak line and the client-bound footnote.
func SweepTableOf(w io.Writer, scenarios []Scenario, cols []Column) error {
	names, cells := SweepSeries(scenarios)
	var ordered []Scenario
	for _, n := range names {
		ordered = append(ordered, cells[n]...)
	}
	bound, err := writeTable(w, cols, ordered, false)
	if err != nil {
		return err
	}
	for _, n := range names {
		if line := peakLine(cells[n]); line != "" {
			if _, err := fmt.Fprintf(w, "%s: %s\n", n, line); err != nil {
				return err
			}
		}
	}
	if bound {
		_, err = fmt.Fprintln(w, clientBoundNote)
	}
	return err
}

// Markdown writes r's table as a GitHub-flavoured markdown table with
// cols (nil: the full table, the sweep table's for a sweep), then, as
// paragraphs, a sweep's peak lines and the client-bound footnote.
func Markdown(w io.Writer, r *Run, cols []Column) error {
	scenarios := r.Scenarios
	var names []string
	var cells map[string][]Scenario
	if r.Meta.Sweep != nil {
		if cols == nil {
			cols = SweepColumns()
		}
		names, cells = SweepSeries(scenarios)
		scenarios = nil
		for _, n := range names {
			scenarios = append(scenarios, cells[n]...)
		}
	} else if cols == nil {
		cols = TableColumns()
	}
	bound, err := writeTable(w, cols, scenarios, true)
	if err != nil {
		return err
	}
	var notes []string
	for _, n := range names {
		if line := peakLine(cells[n]); line != "" {
			notes = append(notes, n+": "+line)
		}
	}
	if bound {
		notes = append(notes, `\`+clientBoundNote) // "* " would start a list
	}
	for _, n := range notes {
		if _, err := fmt.Fprintf(w, "\n%s\n", n); err != nil {
			return err
		}
	}
	return nil
}

// Width is the widest line of rendered text, in runes (the table's
// box-drawing characters and lockbench's names are one column each).
func Width(text []byte) int {
	wide := 0
	for line := range bytes.SplitSeq(text, []byte("\n")) {
		wide = max(wide, utf8.RuneCount(line))
	}
	return wide
}
