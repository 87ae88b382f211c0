package report

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/metrics"
)

// Raw.Hists' kinds of the renewal margins (µs): per successful renewal of
// a lease, its remaining TTL at the moment of the renewal, in the first
// and in the second half of the measured window (metrics.Margins).
const (
	HistMarginFirst  = "renewal_margin_first"
	HistMarginSecond = "renewal_margin_second"
)

// RenewalMarginRaw is the renewal-margin measurement's raw data
// (metrics.Margins), beside Raw.Hists' renewal_margin_first and
// renewal_margin_second: counts and a minimum, which combine exactly.
// Absent for a strategy that does not renew its leases (and in a file
// written before it existed).
type RenewalMarginRaw struct {
	// Renewals are the successful renewals in the window.
	Renewals int64 `json:"renewals"`
	// Late are those whose remaining TTL was below a third of the lease's
	// TTL, counted exactly as they were recorded.
	Late int64 `json:"late"`
	// MinMS is the smallest margin, ms, exactly (0 or less: a renewal that
	// succeeded after the lease's end as its client counted it); 0, and
	// absent, without renewals.
	MinMS float64 `json:"min_ms,omitempty"`
}

// RenewalMarginRawOf is the raw data of a Margins' figures: its histograms
// go to Raw.Hists (SetHist, HistMarginFirst and HistMarginSecond), the
// rest to the result.
func RenewalMarginRawOf(f metrics.MarginsFigures) *RenewalMarginRaw {
	return &RenewalMarginRaw{Renewals: f.Renewals, Late: f.Late, MinMS: float64(f.Min) / float64(time.Millisecond)}
}

// RenewalMargin are the renewal-margin figures of a scenario, derived from
// Raw.RenewalMargin and the two margin histograms (Derive): how much of
// its TTL a lease had left each time it was renewed. A renewal schedule
// that drifts toward the lease's end shows as a falling minimum and p1, a
// negative trend and late renewals, before any lease is lost. Absent for
// a strategy that does not renew.
type RenewalMargin struct {
	// Renewals are the successful renewals the figures cover.
	Renewals int64 `json:"renewals"`
	// LateRenewals are the renewals whose margin was below TTL/3 (the
	// watchdog's own period: a correct one renews with about 2/3 left).
	LateRenewals int64 `json:"late_renewals"`
	// MinMS is the smallest margin, ms (exact); P1MS the margins' 1st
	// percentile, ms (the histograms', 3 significant figures). Absent
	// without renewals.
	MinMS *float64 `json:"min_ms,omitempty"`
	P1MS  *float64 `json:"p1_ms,omitempty"`
	// FirstHalfP1MS and SecondHalfP1MS are the p1 of the renewals in the
	// first and in the second half of the measured window, ms (of each
	// run's window, for repeats combined); each absent without renewals
	// in its half.
	FirstHalfP1MS  *float64 `json:"first_half_p1_ms,omitempty"`
	SecondHalfP1MS *float64 `json:"second_half_p1_ms,omitempty"`
	// TrendMS is SecondHalfP1MS minus FirstHalfP1MS, ms: negative when the
	// margins shrank over the run (a schedule drifting toward the
	// expiry). Absent unless both halves have renewals.
	TrendMS *float64 `json:"trend_ms,omitempty"`
}

// p1MS is h's 1st percentile in ms; nil for an empty h.
func p1MS(h *hdrhistogram.Histogram) *float64 {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	v := float64(h.ValueAtQuantile(1)) / 1000
	return &v
}

// deriveRenewalMargin derives the RenewalMargin figures from raw data (nil
// when not measured).
func deriveRenewalMargin(r *RenewalMarginRaw, first, second *hdrhistogram.Histogram) *RenewalMargin {
	if r == nil {
		return nil
	}
	m := &RenewalMargin{Renewals: r.Renewals, LateRenewals: r.Late}
	all := metrics.NewHistogram()
	for _, h := range []*hdrhistogram.Histogram{first, second} {
		if h != nil {
			all.Merge(h)
		}
	}
	if r.Renewals > 0 {
		v := r.MinMS
		m.MinMS = &v
		m.P1MS = p1MS(all)
	}
	m.FirstHalfP1MS, m.SecondHalfP1MS = p1MS(first), p1MS(second)
	if m.FirstHalfP1MS != nil && m.SecondHalfP1MS != nil {
		t := *m.SecondHalfP1MS - *m.FirstHalfP1MS
		m.TrendMS = &t
	}
	return m
}

// addRenewalMargin combines two inputs' renewal-margin data: nil (not
// measured) unless both measured it; counts add up, the minimum is the
// smaller of those with renewals.
func addRenewalMargin(a, b *RenewalMarginRaw) *RenewalMarginRaw {
	if a == nil || b == nil {
		return nil
	}
	c := *a
	c.Renewals += b.Renewals
	c.Late += b.Late
	switch {
	case a.Renewals == 0:
		c.MinMS = b.MinMS
	case b.Renewals > 0:
		c.MinMS = min(a.MinMS, b.MinMS)
	}
	return &c
}
