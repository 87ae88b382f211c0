// Package rueidis adapts github.com/redis/rueidis to drivers.Driver and
// registers it as "rueidis". rueidis pipelines concurrent commands over a
// few shared connections (auto-pipelining); client-side caching is off.
//
//	import _ "github.com/lockbench/lockbench/drivers/rueidis"
package rueidis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/drivers"
)

// Name is the registered name of this adapter.
const Name = "rueidis"

func init() {
	drivers.Register(Name, "github.com/redis/rueidis: auto-pipelining over shared connections", Open)
}

type driver struct {
	c        rueidis.Client
	opt      *rueidis.ClientOption // what c was built with
	addr     string
	borrowed bool // a node of a cluster client: Close does nothing
	ep       drivers.Endpoint
	// callTimeout, when > 0, is a deadline put on each call's context
	// (Options.ReadTimeout below the connection's ConnWriteTimeout).
	callTimeout time.Duration
}

// bound puts d.callTimeout on ctx when it is set and ctx has no earlier
// deadline.
func (d *driver) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if d.callTimeout <= 0 {
		return ctx, func() {}
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d.callTimeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d.callTimeout)
}

var (
	_ drivers.Driver = (*driver)(nil)
	_ drivers.Native = (*driver)(nil)
)

// Native returns the rueidis.Client.
func (d *driver) Native() any { return d.c }

// ClientOption returns a copy of the rueidis.ClientOption the driver's
// client was built with (for a node of a cluster client, the cluster
// client's): a lock library that needs a client of its own to the same
// server, with the same credentials, TLS, dialer and timeouts, builds it
// from this (rueidislock needs client-side caching, which this adapter's
// client has off). Its slices are shared with the driver's: do not modify
// their elements.
func (d *driver) ClientOption() rueidis.ClientOption { return *d.opt }

// Open connects to o.Addr. o.PoolSize sizes the pool used for blocking
// commands and Pipeline (BlockingPoolSize); ordinary commands share
// auto-pipelined connections, so a small pool does not make them wait.
// o.DialTimeout is the Dialer's Timeout. rueidis has one I/O timeout per
// connection, ConnWriteTimeout (the deadline of each write and the bound
// on waiting for replies, after which the connection is closed): it is
// the larger of o.ReadTimeout and o.WriteTimeout; it does not bound a
// call's wait in practice (through a 1 s blackhole with 300 ms, calls
// waited for the held replies). So a ReadTimeout other than the default
// is also put on each call's context (SetNX, Eval, Do, Pipeline; not
// PSubscribe) when the context has no earlier deadline: the call returns
// a deadline error, the shared connection stays open and its late reply
// is discarded. With the default (5 s) no call gets a deadline of its own
// (the engine's calls carry their own), as before.
// Read-only commands are not retried on network errors (DisableRetry).
func Open(o drivers.Options) (drivers.Driver, error) {
	o = o.WithDefaults()
	opt := rueidis.ClientOption{
		InitAddress:       append([]string{o.Addr}, o.Seeds...),
		Username:          o.Username,
		Password:          o.Password,
		SelectDB:          o.DB,
		TLSConfig:         o.TLS,
		BlockingPoolSize:  o.PoolSize,
		Dialer:            net.Dialer{Timeout: o.DialTimeout},
		ConnWriteTimeout:  max(o.ReadTimeout, o.WriteTimeout),
		DisableCache:      true,
		DisableRetry:      true,
		ForceSingleClient: true,
	}
	if o.Cluster {
		opt.ForceSingleClient = false
	}
	if len(o.Sentinels) > 0 {
		opt.InitAddress = o.Sentinels
		opt.ForceSingleClient = false
		opt.Sentinel = rueidis.SentinelOption{MasterSet: o.MasterName, TopologyRefreshInterval: time.Second,
			TLSConfig: o.TLS, Dialer: opt.Dialer, Password: o.SentinelPassword}
	}
	c, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, &drivers.NodeError{Node: o.Addr, Err: err}
	}
	dr := &driver{c: c, opt: &opt, addr: o.Addr, ep: o.Endpoint}
	if o.ReadTimeout != drivers.DefaultTimeout {
		// ConnWriteTimeout does not bound a call: measured through a 1 s
		// blackhole with 300 ms, calls waited for the held replies.
		dr.callTimeout = o.ReadTimeout
	}
	return dr, nil
}

func (d *driver) Name() string { return Name }

// Endpoint returns the server and login the driver was opened with.
func (d *driver) Endpoint() drivers.Endpoint { return d.ep }

func (d *driver) SetNX(ctx context.Context, key, val string, ttl time.Duration) (bool, error) {
	if ttl < time.Millisecond {
		return false, fmt.Errorf("rueidis: SetNX ttl %v is below 1 ms", ttl)
	}
	ctx, cancel := d.bound(ctx)
	defer cancel()
	cmd := d.c.B().Set().Key(key).Value(val).Nx().PxMilliseconds(ttl.Milliseconds()).Build()
	err := d.c.Do(ctx, cmd).Error()
	if rueidis.IsRedisNil(err) {
		return false, nil
	}
	if err != nil {
		return false, d.wrap(err)
	}
	return true, nil
}

func (d *driver) Eval(ctx context.Context, s *drivers.Script, keys []string, args ...string) (drivers.Reply, error) {
	ctx, cancel := d.bound(ctx)
	defer cancel()
	res := d.c.Do(ctx, d.c.B().Evalsha().Sha1(s.SHA1).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build())
	if err := res.Error(); drivers.IsNoScript(err) {
		res = d.c.Do(ctx, d.c.B().Eval().Script(s.Src).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build())
	}
	return d.reply(res)
}

func (d *driver) Do(ctx context.Context, args ...string) (drivers.Reply, error) {
	if len(args) == 0 {
		return drivers.Reply{}, fmt.Errorf("rueidis: Do with no command")
	}
	ctx, cancel := d.bound(ctx)
	defer cancel()
	if len(args) > 1 && drivers.FirstKey(args[0]) {
		// Routed by the first key's slot (cluster); harmless elsewhere.
		return d.reply(d.c.Do(ctx, d.c.B().Arbitrary(args[0]).Keys(args[1]).Args(args[2:]...).Build()))
	}
	return d.reply(d.c.Do(ctx, d.c.B().Arbitrary(args[0]).Args(args[1:]...).Build()))
}

func (d *driver) Close() error {
	if !d.borrowed {
		d.c.Close()
	}
	return nil
}

var _ drivers.NodeLister = (*driver)(nil)

// Nodes returns each node the client knows (the masters of a cluster), or
// d itself for a single server.
func (d *driver) Nodes(context.Context) ([]drivers.Driver, error) {
	if d.c.Mode() != rueidis.ClientModeCluster {
		return []drivers.Driver{d}, nil
	}
	var out []drivers.Driver
	for addr, c := range d.c.Nodes() {
		out = append(out, &driver{c: c, opt: d.opt, addr: addr, borrowed: true, callTimeout: d.callTimeout, ep: drivers.NodeEndpoint(d.ep, addr)})
	}
	return out, nil
}

func (d *driver) reply(res rueidis.RedisResult) (drivers.Reply, error) {
	msg, err := res.ToMessage()
	if rueidis.IsRedisNil(err) {
		return drivers.Reply{Kind: drivers.KindNil}, nil
	}
	if err != nil {
		return drivers.Reply{}, d.wrap(err)
	}
	return convert(&msg), nil
}

func (d *driver) wrap(err error) error {
	if err == nil {
		return nil
	}
	return &drivers.NodeError{Node: d.addr, Err: err}
}

func convert(m *rueidis.RedisMessage) drivers.Reply {
	switch {
	case m.IsNil():
		return drivers.Reply{Kind: drivers.KindNil}
	case m.IsInt64():
		v, _ := m.AsInt64()
		return drivers.Reply{Kind: drivers.KindInt, Int: v}
	case m.IsBool():
		b, _ := m.AsBool()
		if b {
			return drivers.Reply{Kind: drivers.KindInt, Int: 1}
		}
		return drivers.Reply{Kind: drivers.KindInt, Int: 0}
	case m.IsMap():
		// A RESP3 map becomes a flat array: key, value, key, value.
		mp, _ := m.AsMap()
		out := make([]drivers.Reply, 0, 2*len(mp))
		for k, v := range mp {
			out = append(out, drivers.Reply{Kind: drivers.KindString, Str: k}, convert(&v))
		}
		return drivers.Reply{Kind: drivers.KindArray, Array: out}
	case m.IsArray():
		arr, _ := m.ToArray()
		out := make([]drivers.Reply, len(arr))
		for i := range arr {
			out[i] = convert(&arr[i])
		}
		return drivers.Reply{Kind: drivers.KindArray, Array: out}
	default:
		s, err := m.ToString()
		if err != nil {
			s = m.String()
		}
		return drivers.Reply{Kind: drivers.KindString, Str: s}
	}
}

var _ drivers.Subscriber = (*driver)(nil)

func (d *driver) PSubscribe(ctx context.Context, pattern string, fn func(channel, payload string)) (<-chan struct{}, error) {
	ready := make(chan struct{})
	var once sync.Once
	done := make(chan struct{})
	var rerr error
	hctx := rueidis.WithOnSubscriptionHook(ctx, func(s rueidis.PubSubSubscription) {
		if s.Kind == "psubscribe" {
			once.Do(func() { close(ready) })
		}
	})
	go func() {
		defer close(done)
		rerr = d.c.Receive(hctx, d.c.B().Psubscribe().Pattern(pattern).Build(), func(m rueidis.PubSubMessage) {
			fn(m.Channel, m.Message)
		})
	}()
	select {
	case <-ready:
		return done, nil
	case <-done:
		if rerr == nil {
			rerr = errors.New("subscription ended before it was confirmed")
		}
		return nil, d.wrap(rerr)
	}
}

var _ drivers.Pipeliner = (*driver)(nil)

// Pipeline runs on a dedicated connection from the blocking pool, so that
// no other client's commands share it meanwhile.
func (d *driver) Pipeline(ctx context.Context, cmds ...[]string) ([]drivers.Reply, []error) {
	ctx, cancel := d.bound(ctx)
	defer cancel()
	replies := make([]drivers.Reply, len(cmds))
	errs := make([]error, len(cmds))
	err := d.c.Dedicated(func(c rueidis.DedicatedClient) error {
		built := make(rueidis.Commands, len(cmds))
		for i, a := range cmds {
			built[i] = c.B().Arbitrary(a[0]).Args(a[1:]...).Build()
		}
		for i, r := range c.DoMulti(ctx, built...) {
			replies[i], errs[i] = d.reply(r)
		}
		return nil
	})
	if err != nil {
		for i := range errs {
			errs[i] = d.wrap(err)
		}
	}
	return replies, errs
}
