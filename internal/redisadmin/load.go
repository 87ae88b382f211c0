package redisadmin

import (
	"context"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

// SampleLoad reads INFO stats total_commands_processed from every node of
// ds each interval until ctx ends, and returns the per-interval command
// rates (commands/s), the sampler's own INFO calls subtracted. Intervals
// that begin before from (a scenario's warm-up) are read but not returned.
// A read that fails ends the sampling (a fault killed a node); what was
// read is kept.
func SampleLoad(ctx context.Context, ds []drivers.Driver, interval time.Duration, from time.Time) []float64 {
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
		if el := now.Sub(last).Seconds(); el > 0 && !last.Before(from) {
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
