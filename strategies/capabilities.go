package strategies

import (
	"context"
	"strconv"
)

// Optional capabilities, found by type assertion (as database/sql does).

// Watched is implemented by leases that learn when the lock is lost
// (watchdog renewal found the token gone, or could not renew before the
// lease ran out; a Redlock validity time passed). Context is cancelled at
// that moment and on release: the holder is told of the loss instead of
// finding out too late (the shape of rueidislock).
type Watched interface {
	Context() context.Context
}

// Fenced is implemented by leases that carry a fencing token: a number that
// grows with every acquisition of the lock, so that storage can reject a
// write from a holder whose lease has already passed to someone else
// (Kleppmann, "How to do distributed locking", 2016).
type Fenced interface {
	Fence() int64
}

// Guarded is implemented by lockers that ask the workload to guard its
// write beyond the lock: "cas" (optimistic check of the value read) or
// "fence" (reject a write whose fencing token is below the highest seen).
type Guarded interface {
	Guard() string
}

// Segmented is implemented by lockers that split a resource into
// independently locked segments (`segmented`).
type Segmented interface {
	Segments() int
}

// StatsReporter is implemented by lockers that count events of their own
// (renewals, per-node results, ...). Stats is called once, after the run.
type StatsReporter interface {
	Stats() map[string]float64
}

// Client identifies the worker on whose behalf a call is made. The engine
// puts it in each worker's context once; reentrant locks use Owner as the
// hash field, multilevel picks the worker's application instance from ID.
type Client struct {
	// ID is the worker number, 0..clients-1.
	ID int
	// Owner is unique per worker and run: "<run-id>:<ID>".
	Owner string
}

type clientKey struct{}

// WithClient returns ctx carrying c.
func WithClient(ctx context.Context, c Client) context.Context {
	return context.WithValue(ctx, clientKey{}, c)
}

// ClientFrom returns the Client in ctx; without one, an anonymous client
// whose Owner is a fresh random token (so it is never reentrant).
func ClientFrom(ctx context.Context) Client {
	if c, ok := ctx.Value(clientKey{}).(Client); ok {
		return c
	}
	return Client{ID: -1, Owner: NewToken()}
}

func ms(d interface{ Milliseconds() int64 }) string {
	return strconv.FormatInt(d.Milliseconds(), 10)
}
