package metrics

import "time"

// epoch is the origin of Now: the process's first clock read.
var epoch = time.Now()

// Now returns the time elapsed since a fixed origin in this process, read
// from the monotonic clock alone. time.Now reads two clocks (wall and
// monotonic), which costs about twice as much on a virtual machine's
// kvm-clock; Now is the per-operation timestamp of the engine's hot path,
// where only differences matter. Differences of Now are durations
// (ns resolution); Now never goes backwards.
func Now() time.Duration { return time.Since(epoch) }

// Mono converts t, a time.Time with a monotonic reading (as time.Now
// gives), to the scale of Now.
func Mono(t time.Time) time.Duration { return t.Sub(epoch) }
