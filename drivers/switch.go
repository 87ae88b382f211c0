package drivers

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// Switch is a Driver that forwards to another one, which can be replaced
// while clients use it: a failover points every client at the promoted
// replica this way. It also forwards the optional capabilities.
type Switch struct {
	cur atomic.Pointer[holder]
}

type holder struct{ d Driver }

var (
	_ Driver     = (*Switch)(nil)
	_ Subscriber = (*Switch)(nil)
	_ Pipeliner  = (*Switch)(nil)
	_ Native     = (*Switch)(nil)
)

// Endpoint returns the current driver's Endpoint (EndpointOf; the zero
// Endpoint when it does not tell).
func (s *Switch) Endpoint() Endpoint { e, _ := EndpointOf(s.Current()); return e }

// Native returns the current driver's native client (NativeOf).
func (s *Switch) Native() any { return NativeOf(s.Current()) }

// NewSwitch returns a Switch forwarding to d.
func NewSwitch(d Driver) *Switch {
	s := &Switch{}
	s.Set(d)
	return s
}

// Set makes s forward to d from now on and returns the previous driver
// (which the caller closes when no call can still be using it).
func (s *Switch) Set(d Driver) Driver {
	old := s.cur.Swap(&holder{d})
	if old == nil {
		return nil
	}
	return old.d
}

// Current is the driver s forwards to.
func (s *Switch) Current() Driver { return s.cur.Load().d }

// Name is the current driver's name.
func (s *Switch) Name() string { return s.Current().Name() }

// SetNX forwards.
func (s *Switch) SetNX(ctx context.Context, key, val string, ttl time.Duration) (bool, error) {
	return s.Current().SetNX(ctx, key, val, ttl)
}

// Eval forwards.
func (s *Switch) Eval(ctx context.Context, sc *Script, keys []string, args ...string) (Reply, error) {
	return s.Current().Eval(ctx, sc, keys, args...)
}

// Do forwards.
func (s *Switch) Do(ctx context.Context, args ...string) (Reply, error) {
	return s.Current().Do(ctx, args...)
}

// Close closes the current driver.
func (s *Switch) Close() error { return s.Current().Close() }

// PSubscribe forwards when the current driver can subscribe.
func (s *Switch) PSubscribe(ctx context.Context, pattern string, fn func(channel, payload string)) (<-chan struct{}, error) {
	sub, ok := s.Current().(Subscriber)
	if !ok {
		return nil, errors.New("drivers: " + s.Name() + " has no pub/sub")
	}
	return sub.PSubscribe(ctx, pattern, fn)
}

// TrackPrefix forwards when the current driver can track (Tracker); the
// tracking client does not follow a later failover.
func (s *Switch) TrackPrefix(ctx context.Context, prefix string, fn func(keys []string)) (<-chan struct{}, error) {
	tr, ok := s.Current().(Tracker)
	if !ok {
		return nil, errors.New("drivers: " + s.Name() + " has no client-side-caching invalidations")
	}
	return tr.TrackPrefix(ctx, prefix, fn)
}

// Pipeline forwards when the current driver can pipeline.
func (s *Switch) Pipeline(ctx context.Context, cmds ...[]string) ([]Reply, []error) {
	pl, ok := s.Current().(Pipeliner)
	if !ok {
		errs := make([]error, len(cmds))
		for i := range errs {
			errs[i] = errors.New("drivers: " + s.Name() + " cannot pipeline")
		}
		return make([]Reply, len(cmds)), errs
	}
	return pl.Pipeline(ctx, cmds...)
}
