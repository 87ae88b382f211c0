package engine

import (
	"context"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/report"
)

// sampleLoad reads INFO stats total_commands_processed from every node of
// ds each interval until ctx ends, and returns the per-interval command
// rates (commands/s), the sampler's own INFO calls subtracted. A read that
// fails ends the sampling (a fault killed a node); what was read is kept.
func sampleLoad(ctx context.Context, ds []drivers.Driver, interval time.Duration) []float64 {
	read := func() (int64, bool) {
		var sum int64
		for _, d := range ds {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			r, err := d.Do(rctx, "INFO", "stats")
			cancel()
			if err != nil {
				return 0, false
			}
			n, ok := infoInt(r.Str, "total_commands_processed")
			if !ok {
				return 0, false
			}
			sum += n
		}
		return sum, true
	}
	prev, ok := read()
	if !ok {
		return nil
	}
	last := time.Now()
	t := time.NewTicker(interval)
	defer t.Stop()
	var rates []float64
	for {
		select {
		case <-ctx.Done():
			return rates
		case <-t.C:
		}
		n, ok := read()
		now := time.Now()
		if !ok {
			return rates
		}
		// Each INFO counts as one command on its node.
		delta := n - prev - int64(len(ds))
		if el := now.Sub(last).Seconds(); el > 0 {
			rates = append(rates, math.Max(0, float64(delta))/el)
		}
		prev, last = n, now
	}
}

// infoInt returns the integer field name from an INFO reply.
func infoInt(info, name string) (int64, bool) {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// summarizeLoad turns per-interval rates into a ServerLoad (nil when empty).
func summarizeLoad(rates []float64, interval time.Duration) *report.ServerLoad {
	if len(rates) == 0 {
		return nil
	}
	s := append([]float64(nil), rates...)
	sort.Float64s(s)
	var sum, sq float64
	for _, r := range s {
		sum += r
	}
	mean := sum / float64(len(s))
	for _, r := range s {
		sq += (r - mean) * (r - mean)
	}
	l := &report.ServerLoad{
		IntervalMS: float64(interval) / float64(time.Millisecond), Samples: len(s),
		MeanPerSec: mean, PeakPerSec: s[len(s)-1],
		P99PerSec: s[min(len(s)-1, int(math.Ceil(0.99*float64(len(s))))-1)],
	}
	if mean > 0 {
		l.PeakToMean = l.PeakPerSec / mean
		l.CV = math.Sqrt(sq/float64(len(s))) / mean
	}
	return l
}
