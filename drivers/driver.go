package drivers

import (
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
)

// Driver is what strategies and workloads need from a Redis client. One
// Driver talks to one Redis server (one address). Every method is safe for
// concurrent use by many goroutines.
type Driver interface {
	// Name is the registered name of the adapter ("goredis", "rueidis").
	Name() string
	// SetNX runs SET key val NX PX ttl: it reports true when the key was set,
	// false when it already existed. ttl is rounded down to whole ms and
	// must be at least 1 ms.
	SetNX(ctx context.Context, key, val string, ttl time.Duration) (bool, error)
	// Eval runs a Lua script by EVALSHA and falls back to EVAL (which also
	// loads it) when the server answers NOSCRIPT.
	Eval(ctx context.Context, s *Script, keys []string, args ...string) (Reply, error)
	// Do sends any command, for example Do(ctx, "GET", key). A nil bulk
	// reply is a Reply of kind KindNil, not an error.
	Do(ctx context.Context, args ...string) (Reply, error)
	// Close releases the connections.
	Close() error
}

// Endpoint is one server and how to reach it: the connection settings
// lockbench carries from its flags to a driver, in one type.
type Endpoint struct {
	// Addr is the server's host:port. Required.
	Addr string
	// Username for AUTH username password (Redis 6+ ACL users). Empty: the
	// default user (AUTH password).
	Username string
	// Password for AUTH (requirepass, or the ACL user's). Empty: no AUTH.
	Password string
	// DB is the database SELECTed on every connection. Default (0): 0.
	// A Cluster has only database 0.
	DB int
	// TLS, when not nil, makes every connection (to Sentinels too) a TLS
	// connection with this configuration: trusted CAs (RootCAs), a client
	// certificate, InsecureSkipVerify. An empty ServerName is taken from
	// each address's host, so one config serves every node of a Cluster.
	// Nil: plain TCP.
	TLS *tls.Config
	// Sentinels, when set, are Sentinel addresses: the client asks them
	// for the master of MasterName and follows failovers; Addr is then only
	// a label.
	Sentinels  []string
	MasterName string
	// SentinelPassword is the Sentinels' own password (their requirepass
	// or default user's), not the master's. Empty: no AUTH to Sentinels.
	SentinelPassword string
	// Cluster makes the client a Redis Cluster client seeded with Addr; it
	// routes each command by its key's slot. Multi-key commands must keep
	// their keys in one slot (hash tags).
	Cluster bool
	// Seeds are further Cluster addresses tried, with Addr, to discover the
	// cluster's layout (so one node down does not stop the client). Only
	// with Cluster.
	Seeds []string
}

// Options configure an adapter. The zero value of each field means the
// default given in its comment.
type Options struct {
	// Endpoint is the server and how to log in.
	Endpoint
	// PoolSize is the number of connections a pooling client (go-redis)
	// keeps, and the blocking pool size of rueidis. Size it to the number of
	// concurrent clients. Default (0): 10.
	PoolSize int
	// DialTimeout bounds connecting. Default (0): 5 s.
	DialTimeout time.Duration
	// ReadTimeout bounds waiting for a reply, so that no call waits
	// forever on a server that stopped answering. Default (0): 5 s.
	// go-redis: ReadTimeout (and PoolTimeout, the wait for a free pooled
	// connection). rueidis has no read timeout of its own: its
	// ConnWriteTimeout is the larger of ReadTimeout and WriteTimeout on
	// writes (it does not bound a call's wait in practice); a ReadTimeout
	// other than the default is applied as a deadline on each call's
	// context (the call returns, the connection stays open).
	ReadTimeout time.Duration
	// WriteTimeout bounds writing a command. Default (0): 5 s.
	// go-redis: WriteTimeout; rueidis: ConnWriteTimeout (see ReadTimeout).
	WriteTimeout time.Duration
}

// DefaultTimeout is the dial, read and write timeout of Options' zero
// value.
const DefaultTimeout = 5 * time.Second

// WithDefaults returns o with zero fields replaced by their defaults.
func (o Options) WithDefaults() Options {
	if o.PoolSize <= 0 {
		o.PoolSize = 10
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultTimeout
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = DefaultTimeout
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultTimeout
	}
	return o
}

// ReplyKind tells which field of a Reply holds the value.
type ReplyKind uint8

// Reply kinds.
const (
	KindNil    ReplyKind = iota // nil bulk string or nil array
	KindInt                     // integer reply: Int
	KindString                  // bulk or simple string (status) reply: Str
	KindArray                   // array reply: Array
)

// Reply is a decoded Redis reply. Error replies are returned as errors, not
// as Replies.
type Reply struct {
	Kind  ReplyKind
	Int   int64
	Str   string
	Array []Reply
}

// IsNil reports whether the reply is a nil reply.
func (r Reply) IsNil() bool { return r.Kind == KindNil }

// AsInt returns the integer value of an integer reply, or parses a string
// reply as a base-10 integer. A nil reply is an error (ErrNil).
func (r Reply) AsInt() (int64, error) {
	switch r.Kind {
	case KindInt:
		return r.Int, nil
	case KindString:
		n, err := strconv.ParseInt(r.Str, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("drivers: reply %q is not an integer", r.Str)
		}
		return n, nil
	case KindNil:
		return 0, ErrNil
	}
	return 0, fmt.Errorf("drivers: array reply is not an integer")
}

// AsString returns the string form of a string or integer reply.
func (r Reply) AsString() (string, error) {
	switch r.Kind {
	case KindString:
		return r.Str, nil
	case KindInt:
		return strconv.FormatInt(r.Int, 10), nil
	case KindNil:
		return "", ErrNil
	}
	return "", fmt.Errorf("drivers: array reply is not a string")
}

// ErrNil is returned by Reply accessors on a nil reply.
var ErrNil = errors.New("drivers: nil reply")

// Script is a Lua script with its SHA1 digest, shared by all adapters.
type Script struct {
	Src string
	// SHA1 is the hex digest of Src, the name EVALSHA uses.
	SHA1 string
}

// NewScript returns a Script for the Lua source src.
func NewScript(src string) *Script {
	sum := sha1.Sum([]byte(src))
	return &Script{Src: src, SHA1: hex.EncodeToString(sum[:])}
}

// IsNoScript reports whether err is the server's NOSCRIPT error, on which an
// adapter retries with EVAL.
func IsNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// ErrorKind names the class of a Redis call error for the error counters:
// "timeout", "canceled", "connection", the server's error prefix in lower
// case ("readonly", "loading", "oom", "noauth", "wrongpass", "noscript",
// "busy", "err", ...), "other", or the kind an error names itself
// (a method ErrorKind() string: an external lock adapter's errors).
func ErrorKind(err error) string {
	if err == nil {
		return ""
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() {
		return "timeout"
	}
	var ke interface{ ErrorKind() string }
	if errors.As(err, &ke) {
		return ke.ErrorKind()
	}
	var ne *NodeError
	for errors.As(err, &ne) {
		err = ne.Err
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, ' '); i > 0 {
		prefix := msg[:i]
		if strings.ToUpper(prefix) == prefix && isWord(prefix) {
			return strings.ToLower(prefix)
		}
	}
	low := strings.ToLower(msg)
	for _, s := range []string{"connection refused", "connection reset", "broken pipe", "eof", "closed", "no route", "dial"} {
		if strings.Contains(low, s) {
			return "connection"
		}
	}
	return "other"
}

func isWord(s string) bool {
	for _, c := range s {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return s != ""
}

// Factory opens a Driver with the given options.
type Factory func(o Options) (Driver, error)

var reg = registry.New[Factory]("driver")

// Register makes an adapter available under name, with a one-line
// description for `lockbench list`. It panics when name is empty, f is nil,
// or name is registered twice (as database/sql.Register).
func Register(name, desc string, f Factory) {
	if f == nil {
		panic("drivers: Register with a nil factory")
	}
	reg.Register(name, desc, nil, f)
}

// Names lists the registered adapters, sorted.
func Names() []string { return reg.Names() }

// Lookup returns nil for a registered adapter, else an error wrapping
// ErrUnknown that suggests the nearest name and lists the valid ones.
func Lookup(name string) error {
	_, err := reg.Lookup(name, ErrUnknown)
	return err
}

// Describe returns an adapter's one-line description ("" if unknown).
func Describe(name string) string { e, _ := reg.Get(name); return e.Desc }

// ErrUnknown is wrapped by Open for a name that is not registered.
var ErrUnknown = errors.New("unknown driver")

// Open opens the adapter registered as name. An unknown name gives an error
// wrapping ErrUnknown that lists the valid names.
func Open(name string, o Options) (Driver, error) {
	e, err := reg.Lookup(name, ErrUnknown)
	if err != nil {
		return nil, err
	}
	if o.Addr == "" && len(o.Sentinels) == 0 {
		return nil, errors.New("drivers: Options.Addr is empty")
	}
	return e.Value(o.WithDefaults())
}

// NodeError is an error from one server, carrying its address.
type NodeError struct {
	Node string
	Err  error
}

func (e *NodeError) Error() string { return e.Node + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *NodeError) Unwrap() error { return e.Err }

// NodeLister is the optional capability of a cluster client to reach each
// of its nodes, for per-node commands (SCAN, INFO, DBSIZE). The drivers it
// returns belong to the client: closing them does nothing.
type NodeLister interface {
	Nodes(ctx context.Context) ([]Driver, error)
}

// FirstKey reports whether a command's first argument is a key, for
// routing a generic command by slot: single-key commands (GET, SET, INCR,
// PTTL, HGET, ...) and multi-key ones whose keys must share a slot (MGET,
// MSET, DEL, EXISTS, UNLINK).
func FirstKey(cmd string) bool {
	switch strings.ToUpper(cmd) {
	case "GET", "SET", "SETNX", "INCR", "INCRBY", "DECR", "DECRBY", "PTTL", "TTL", "PEXPIRE", "EXPIRE",
		"HGET", "HSET", "HEXISTS", "HINCRBY", "HLEN", "HDEL", "LRANGE", "LPUSH", "RPUSH", "LLEN", "LREM",
		"ZSCORE", "ZADD", "ZREM", "TYPE", "MGET", "MSET", "DEL", "EXISTS", "UNLINK":
		return true
	}
	return false
}

// Native is the optional capability of a Driver to hand out the client
// library's own client (both adapters have it): go-redis's
// redis.UniversalClient for goredis, rueidis.Client for rueidis. Lock
// libraries built on one of those clients (redsync, redislock,
// rueidislock) run on it. Calls made on the native client bypass the
// Driver's per-call bounds (the rueidis adapter's read timeout as a
// context deadline) but use the same connections, password and TLS.
type Native interface {
	// Native returns the underlying client; the Driver keeps owning it
	// (Close the Driver, not the client).
	Native() any
}

// NativeOf returns d's native client (Native), or nil when d has none.
// A Switch gives its current driver's client: a library that keeps it
// does not follow a later failover.
func NativeOf(d Driver) any {
	if n, ok := d.(Native); ok {
		return n.Native()
	}
	return nil
}

// Subscriber is the optional pub/sub capability of a Driver (both adapters
// have it); find it with a type assertion.
type Subscriber interface {
	// PSubscribe subscribes to the glob pattern and calls fn, from one
	// goroutine, with the channel and payload of every message published to
	// a matching channel, until ctx ends. It returns once the server has
	// confirmed the subscription. The returned channel is closed when the
	// subscription has ended (ctx done or the connection lost).
	PSubscribe(ctx context.Context, pattern string, fn func(channel, payload string)) (<-chan struct{}, error)
}

// Tracker is the optional capability of a Driver to deliver RESP3
// client-side-caching invalidations (the rueidis adapter has it; go-redis
// has none): the `csc` retry policy's wake-ups. Find it with a type
// assertion.
type Tracker interface {
	// TrackPrefix opens a client of its own, on one connection per
	// server, with CLIENT TRACKING ON BCAST PREFIX prefix: the server then
	// pushes an invalidation naming every key under prefix that a command
	// of any client modifies (a write, a DEL, a PEXPIRE) or that expires
	// or is evicted. fn is called, from the connection's reading goroutine
	// (it must not block), with the keys of each push; keys == nil is a
	// flush-all (FLUSHALL/FLUSHDB, or the connection lost: what it was
	// told may be incomplete). It returns once tracking is on. The client
	// is closed, and the returned channel closed, when ctx ends. Errors:
	// the connection or the CLIENT TRACKING command failed (a server
	// before Redis 6 has no RESP3 tracking).
	TrackPrefix(ctx context.Context, prefix string, fn func(keys []string)) (<-chan struct{}, error)
}

// Pipeliner is the optional capability to send several commands back to
// back on one connection (both adapters have it). Commands whose meaning
// depends on the connection need it: WAIT counts the replicas that have
// acknowledged the writes of its own connection.
type Pipeliner interface {
	// Pipeline sends cmds (each a command and its arguments) on one
	// connection and returns one Reply per command; an error reply of one
	// command is returned as its error, in order, in errs.
	Pipeline(ctx context.Context, cmds ...[]string) (replies []Reply, errs []error)
}

// Endpointer is the optional capability of a Driver that tells the server
// and login it was opened with (both adapters have it): lockbench hands
// them to a lock that opens its own connections, an external adapter
// process (strategies/ext).
type Endpointer interface {
	Endpoint() Endpoint
}

// EndpointOf returns the Endpoint d was opened with, and false when d
// does not tell (it is not an Endpointer). A Switch tells its current
// driver's.
func EndpointOf(d Driver) (Endpoint, bool) {
	if e, ok := d.(Endpointer); ok {
		return e.Endpoint(), true
	}
	return Endpoint{}, false
}

// NodeEndpoint is ep, a Cluster's seed endpoint, for one of its nodes at
// addr: the same login and TLS, no seeds, not a Cluster client.
func NodeEndpoint(ep Endpoint, addr string) Endpoint {
	ep.Addr, ep.Seeds, ep.Cluster = addr, nil, false
	return ep
}
