package history

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/metrics"
)

// OffsetSamples is how many TIME round trips MeasureOffset makes.
const OffsetSamples = 16

// Offset is the Redis server's clock relative to the process clock
// (metrics.Now): server time = process time + Offset, within ±Uncertainty.
type Offset struct {
	Offset, Uncertainty, RTT time.Duration
	// Measured is false when no sample succeeded (Offset is then 0 and
	// the history cannot be put on the server's clock).
	Measured bool
}

// MeasureOffset measures the offset of d's server clock: n TIME round
// trips (OffsetSamples when n <= 0), keeping the one with the smallest
// round trip, as NTP's clock filter and Cristian's algorithm (1989) do:
// offset = server_time − (t_send + t_recv)/2, uncertainty = rtt/2 +
// 0.5 µs (TIME has µs resolution: server_time is taken at the middle of
// its µs). Errors: every sample failed, or a reply that is not
// [seconds, microseconds].
func MeasureOffset(ctx context.Context, d drivers.Driver, n int) (Offset, error) {
	if n <= 0 {
		n = OffsetSamples
	}
	var best Offset
	var lastErr error
	for i := 0; i < n; i++ {
		t0 := metrics.Now()
		r, err := d.Do(ctx, "TIME")
		t1 := metrics.Now()
		if err != nil {
			lastErr = err
			if ctx.Err() != nil {
				break
			}
			continue
		}
		server, err := timeReply(r)
		if err != nil {
			return Offset{}, err
		}
		rtt := t1 - t0
		if best.Measured && rtt >= best.RTT {
			continue
		}
		best = Offset{Offset: time.Duration(server) + 500 - (t0+t1)/2, Uncertainty: rtt/2 + 500, RTT: rtt, Measured: true}
	}
	if !best.Measured {
		return Offset{}, fmt.Errorf("TIME: %w", lastErr)
	}
	return best, nil
}

// timeReply decodes TIME's [seconds, microseconds] to Unix ns.
func timeReply(r drivers.Reply) (int64, error) {
	if len(r.Array) != 2 {
		return 0, fmt.Errorf("TIME: reply %+v, want [seconds microseconds]", r)
	}
	sec, err1 := r.Array[0].AsInt()
	usec, err2 := r.Array[1].AsInt()
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("TIME: reply %+v, want [seconds microseconds]", r)
	}
	return sec*1e9 + usec*1e3, nil
}

// Combine joins two measurements of one scenario's offset (at its start
// and its end): their mean, with the larger uncertainty plus half their
// difference (the clocks' drift over the scenario). A measurement that
// failed is left out.
func Combine(a, b Offset) Offset {
	switch {
	case !a.Measured:
		return b
	case !b.Measured:
		return a
	}
	diff := a.Offset - b.Offset
	if diff < 0 {
		diff = -diff
	}
	return Offset{Offset: (a.Offset + b.Offset) / 2, Uncertainty: max(a.Uncertainty, b.Uncertainty) + diff/2,
		RTT: min(a.RTT, b.RTT), Measured: true}
}

// LocalHeader returns h with what this process knows of itself filled in:
// Format, Version, Host, BootID, Pid, a new Proc (unless set) and the
// clock bases (monoBase).
func LocalHeader(h Header) Header {
	h.Format, h.Version = Format, Version
	if h.Host == "" {
		h.Host, _ = os.Hostname()
	}
	if h.BootID == "" {
		h.BootID = bootID()
	}
	if h.Pid == 0 {
		h.Pid = os.Getpid()
	}
	if h.Proc == "" {
		h.Proc = newProc()
	}
	h.MonoBaseNS, h.MonoErrNS = monoBase()
	h.WallBaseNS = time.Now().UnixNano() - int64(metrics.Now())
	return h
}

// bootID reads the kernel's boot id ("" where there is none).
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// monoBase links the process clock to CLOCK_MONOTONIC: 16 times, a
// process-clock read, a CLOCK_MONOTONIC read and another process-clock
// read; the triple with the smallest gap gives base = mono − (a+b)/2 and
// its error (b−a)/2 (+1 ns). (0, 0) where CLOCK_MONOTONIC cannot be read.
func monoBase() (base, errNS int64) {
	best := int64(-1)
	for i := 0; i < 16; i++ {
		var ts unix.Timespec
		a := metrics.Now()
		err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		b := metrics.Now()
		if err != nil {
			return 0, 0
		}
		gap := int64(b - a)
		if best < 0 || gap < best {
			best = gap
			base = ts.Nano() - int64(a+b)/2
		}
	}
	return base, best/2 + 1
}
