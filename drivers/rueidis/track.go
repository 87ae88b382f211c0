package rueidis

import (
	"context"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/drivers"
)

var _ drivers.Tracker = (*driver)(nil)

// trackPing is the interval of the tracking client's PING to every server:
// rueidis redials a lost connection (and turns tracking on again) only
// when a command is sent on it.
const trackPing = time.Second

// TrackPrefix (drivers.Tracker) builds a rueidis client of its own from
// the driver's ClientOption (same addresses, credentials, TLS, dialer and
// timeouts; a Cluster or Sentinel client when the driver's is one) with
// client-side caching on (the driver's client has it off),
// ClientTrackingOptions BCAST PREFIX prefix, one pipelined connection per
// server (PipelineMultiplex -1: each connection of several would get
// every push) and OnInvalidations calling fn with the pushed keys. The
// client never reads or writes a key: BCAST needs no tracked reads.
//
// It PINGs every server before it returns (rueidis dials lazily; the
// handshake sends CLIENT TRACKING, so tracking is on once PING returns),
// then every second until ctx ends: a lost connection is reported as a
// flush-all (keys nil) by rueidis and redialled, with tracking, on the
// next PING. Errors: a server's PING failed (the NodeError names it).
func (d *driver) TrackPrefix(ctx context.Context, prefix string, fn func(keys []string)) (<-chan struct{}, error) {
	opt := *d.opt
	opt.DisableCache = false
	opt.ClientTrackingOptions = []string{"BCAST", "PREFIX", prefix}
	opt.PipelineMultiplex = -1
	opt.OnInvalidations = func(ms []rueidis.RedisMessage) {
		if ms == nil {
			fn(nil)
			return
		}
		keys := make([]string, 0, len(ms))
		for i := range ms {
			if k, err := ms[i].ToString(); err == nil {
				keys = append(keys, k)
			}
		}
		fn(keys)
	}
	c, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, &drivers.NodeError{Node: d.addr, Err: err}
	}
	ping := func(ctx context.Context) error {
		for addr, n := range c.Nodes() {
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := n.Do(pctx, n.B().Ping().Build()).Error()
			cancel()
			if err != nil {
				return &drivers.NodeError{Node: addr, Err: err}
			}
		}
		return nil
	}
	if err := ping(ctx); err != nil {
		c.Close()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer c.Close()
		t := time.NewTicker(trackPing)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = ping(ctx)
			}
		}
	}()
	return done, nil
}
