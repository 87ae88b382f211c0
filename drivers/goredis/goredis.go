// Package goredis adapts github.com/redis/go-redis/v9 to drivers.Driver and
// registers it as "goredis". Import it for its side effect:
//
//	import _ "github.com/lockbench/lockbench/drivers/goredis"
package goredis

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/drivers"
)

// Name is the registered name of this adapter.
const Name = "goredis"

func init() {
	// go-redis logs dial retries to stderr; lockbench reports errors itself.
	redis.SetLogger(quiet{})
	drivers.Register(Name, "github.com/redis/go-redis/v9: a connection pool of --pool-size connections (default --clients + 4)", Open)
}

type driver struct {
	c        redis.UniversalClient
	addr     string
	borrowed bool // a node of a cluster client: Close does nothing
	ep       drivers.Endpoint
}

// Endpoint returns the server and login the driver was opened with.
func (d *driver) Endpoint() drivers.Endpoint { return d.ep }

var (
	_ drivers.Driver = (*driver)(nil)
	_ drivers.Native = (*driver)(nil)
)

// Native returns the go-redis client, a redis.UniversalClient (a
// *redis.Client for one server, a *redis.ClusterClient for a Cluster).
func (d *driver) Native() any { return d.c }

// Open returns a go-redis client for o.Addr with a pool of o.PoolSize
// connections (also the minimum kept idle, so the measured window does not
// pay for dialing), o.DialTimeout, o.ReadTimeout and o.WriteTimeout as
// its DialTimeout, ReadTimeout and WriteTimeout, and o.ReadTimeout as its
// PoolTimeout (how long a call waits for a free connection when all are
// busy). Commands are not retried on network errors: a lock
// command that may or may not have run must surface as an error.
func Open(o drivers.Options) (drivers.Driver, error) {
	o = o.WithDefaults()
	// One option set for the three shapes; NewUniversalClient picks a
	// sentinel-backed FailoverClient (MasterName), a ClusterClient
	// (IsClusterMode) or a single-node Client.
	u := &redis.UniversalOptions{
		Addrs:                 append([]string{o.Addr}, o.Seeds...),
		Username:              o.Username,
		Password:              o.Password,
		DB:                    o.DB,
		TLSConfig:             o.TLS,
		PoolSize:              o.PoolSize,
		MinIdleConns:          o.PoolSize,
		DialTimeout:           o.DialTimeout,
		ReadTimeout:           o.ReadTimeout,
		WriteTimeout:          o.WriteTimeout,
		PoolTimeout:           o.ReadTimeout, // the wait for a free connection when all PoolSize are busy
		MaxRetries:            -1,
		ContextTimeoutEnabled: true,
		DisableIdentity:       true,
		IsClusterMode:         o.Cluster,
	}
	if len(o.Sentinels) > 0 {
		u.Addrs, u.MasterName, u.SentinelPassword = o.Sentinels, o.MasterName, o.SentinelPassword
	}
	if o.Cluster {
		u.MinIdleConns = 0 // per node; the pool fills as the slots are used
	}
	return &driver{c: redis.NewUniversalClient(u), addr: o.Addr, ep: o.Endpoint}, nil
}

func (d *driver) Name() string { return Name }

func (d *driver) SetNX(ctx context.Context, key, val string, ttl time.Duration) (bool, error) {
	if ttl < time.Millisecond {
		return false, fmt.Errorf("goredis: SetNX ttl %v is below 1 ms", ttl)
	}
	// go-redis sends SET key val PX ms NX for sub-second-precise TTLs and
	// EX s NX for whole seconds; both are the same atomic command.
	ok, err := d.c.SetNX(ctx, key, val, ttl).Result()
	return ok, d.wrap(err)
}

func (d *driver) Eval(ctx context.Context, s *drivers.Script, keys []string, args ...string) (drivers.Reply, error) {
	a := make([]any, len(args))
	for i, v := range args {
		a[i] = v
	}
	v, err := d.c.EvalSha(ctx, s.SHA1, keys, a...).Result()
	if drivers.IsNoScript(err) {
		v, err = d.c.Eval(ctx, s.Src, keys, a...).Result()
	}
	return d.reply(v, err)
}

func (d *driver) Do(ctx context.Context, args ...string) (drivers.Reply, error) {
	a := make([]any, len(args))
	for i, v := range args {
		a[i] = v
	}
	v, err := d.c.Do(ctx, a...).Result()
	return d.reply(v, err)
}

func (d *driver) Close() error {
	if d.borrowed {
		return nil
	}
	return d.c.Close()
}

var _ drivers.NodeLister = (*driver)(nil)

// Nodes returns the cluster's masters, or d itself when it is not a
// cluster client.
func (d *driver) Nodes(ctx context.Context) ([]drivers.Driver, error) {
	cc, ok := d.c.(*redis.ClusterClient)
	if !ok {
		return []drivers.Driver{d}, nil
	}
	var mu sync.Mutex
	var out []drivers.Driver
	err := cc.ForEachMaster(ctx, func(_ context.Context, c *redis.Client) error {
		mu.Lock()
		out = append(out, &driver{c: c, addr: c.Options().Addr, borrowed: true, ep: drivers.NodeEndpoint(d.ep, c.Options().Addr)})
		mu.Unlock()
		return nil
	})
	return out, err
}

func (d *driver) reply(v any, err error) (drivers.Reply, error) {
	if errors.Is(err, redis.Nil) {
		return drivers.Reply{Kind: drivers.KindNil}, nil
	}
	if err != nil {
		return drivers.Reply{}, d.wrap(err)
	}
	return convert(v), nil
}

func (d *driver) wrap(err error) error {
	if err == nil {
		return nil
	}
	return &drivers.NodeError{Node: d.addr, Err: err}
}

func convert(v any) drivers.Reply {
	switch x := v.(type) {
	case nil:
		return drivers.Reply{Kind: drivers.KindNil}
	case int64:
		return drivers.Reply{Kind: drivers.KindInt, Int: x}
	case string:
		return drivers.Reply{Kind: drivers.KindString, Str: x}
	case bool:
		if x {
			return drivers.Reply{Kind: drivers.KindInt, Int: 1}
		}
		return drivers.Reply{Kind: drivers.KindInt, Int: 0}
	case []any:
		arr := make([]drivers.Reply, len(x))
		for i, e := range x {
			arr[i] = convert(e)
		}
		return drivers.Reply{Kind: drivers.KindArray, Array: arr}
	case map[any]any:
		arr := make([]drivers.Reply, 0, 2*len(x))
		for k, e := range x {
			arr = append(arr, convert(k), convert(e))
		}
		return drivers.Reply{Kind: drivers.KindArray, Array: arr}
	default:
		return drivers.Reply{Kind: drivers.KindString, Str: fmt.Sprint(x)}
	}
}

// quiet discards go-redis's internal log lines.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

var _ drivers.Subscriber = (*driver)(nil)

func (d *driver) PSubscribe(ctx context.Context, pattern string, fn func(channel, payload string)) (<-chan struct{}, error) {
	ps := d.c.PSubscribe(ctx, pattern)
	if _, err := ps.Receive(ctx); err != nil { // the subscription confirmation
		ps.Close()
		return nil, d.wrap(err)
	}
	done := make(chan struct{})
	ch := ps.Channel()
	go func() {
		defer close(done)
		defer ps.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case m, ok := <-ch:
				if !ok {
					return
				}
				fn(m.Channel, m.Payload)
			}
		}
	}()
	return done, nil
}

var _ drivers.Pipeliner = (*driver)(nil)

// Pipeline uses a go-redis pipeline, which runs on one pooled connection.
func (d *driver) Pipeline(ctx context.Context, cmds ...[]string) ([]drivers.Reply, []error) {
	pipe := d.c.Pipeline()
	res := make([]*redis.Cmd, len(cmds))
	for i, c := range cmds {
		a := make([]any, len(c))
		for j, v := range c {
			a[j] = v
		}
		res[i] = pipe.Do(ctx, a...)
	}
	_, _ = pipe.Exec(ctx)
	replies := make([]drivers.Reply, len(cmds))
	errs := make([]error, len(cmds))
	for i, r := range res {
		v, err := r.Result()
		replies[i], errs[i] = d.reply(v, err)
	}
	return replies, errs
}
