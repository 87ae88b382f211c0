package strategies

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
)

// Locker takes locks. Implementations are safe for concurrent use: every
// worker of a run calls the same Locker. A Locker that also implements
// io.Closer is closed at the end of the scenario (its own connections,
// sessions or pools; the Config.Nodes drivers are lockbench's and closed
// by it).
type Locker interface {
	// TryAcquire makes one attempt to take the lock named key (the Redis
	// key the lock lives in; a strategy may keep companion keys that
	// start with it, in the same hash slot). It returns:
	//
	//   - a Lease and nil: the lock is this caller's until the lease ends;
	//   - nil and ErrNotAcquired (or an error wrapping it; callers test
	//     with errors.Is): another holder has the lock. Acquire then
	//     retries as its retry policy says;
	//   - nil and any other error (a Redis error, ctx's error): the
	//     attempt failed. Acquire stops retrying and returns it; the run
	//     counts it as an error by kind.
	//
	// ctx carries the worker's Client (ClientFrom) and is cancelled or
	// times out with the caller. For a locker that neither Blocks nor owns
	// its retry loop, lockbench's worker may pass a context without
	// cancellation whose calls are bounded only by the driver's I/O
	// timeout: such a TryAcquire must make its Redis calls and return, not
	// wait in-process. One that waits (a library's retry loop, a lock
	// service's queue) implements OwnRetry or Queued and gets the acquire
	// timeout as ctx's deadline. A strategy with Config.Tokens set calls
	// Config.Sent before each command that may store a token.
	TryAcquire(ctx context.Context, key string) (Lease, error)
}

// Lease is a held lock.
type Lease interface {
	// Key is the lock's Redis key, the key passed to TryAcquire.
	Key() string
	// Token is the holder's value stored in the lock: the value of a
	// string lock key, the field of a hash lock key (reentrant locks
	// use the client's Owner), or the member of a sorted-set lock key (a
	// semaphore's permit). The liveness oracle and package locktest
	// compare it with what the key holds, so it must be exactly that. The
	// built-in strategies store NewToken's 128 random bits from
	// crypto/rand, hex-encoded (32 characters), unless
	// Config.ConstantToken.
	Token() string
	// Release gives the lock up and returns nil when it removed (or, for a
	// reentrant lock, decremented) this lease's hold. Strategies that check
	// ownership return ErrNotOwner (or an error wrapping it) when the key
	// no longer holds this lease's token (the lease expired and someone
	// else may hold the lock, or the key is gone); the key is then left
	// alone. Any other error is the server's or ctx's. lockbench calls it
	// once per lease, on a context without the run's cancellation (the
	// worker's I/O context, bounded by the driver's timeouts; the
	// caller's own with --release caller); the run counts ErrNotOwner as a
	// lost lease, not as an error. Callers: pass a context that the
	// caller's cancellation cannot skip.
	Release(ctx context.Context) error
}

// Errors of the lock seam. Strategies may wrap them (fmt.Errorf with %w);
// lockbench tests them with errors.Is.
var (
	// ErrNotAcquired: the lock is held by someone else. TryAcquire returns
	// it for one failed attempt (an OwnRetry locker after its library gave
	// up); Acquire returns it after every retry the policy allowed.
	ErrNotAcquired = errors.New("strategies: lock not acquired")
	// ErrAcquireTimeout: Acquire's timeout passed before the lock was
	// taken. Strategies do not return it themselves.
	ErrAcquireTimeout = errors.New("strategies: acquire timeout")
	// ErrNotOwner: release (or extend) found another token, or no key, in
	// the lock: the lease had already ended.
	ErrNotOwner = errors.New("strategies: lock not owned by this lease")
	// ErrFatal is wrapped by a locker's error when the locker can serve
	// no further call (an external lock's adapter process exited): the
	// scenario stops at once (StopReason "aborted") instead of counting
	// one error per attempt until its end.
	ErrFatal = errors.New("strategies: the lock can serve no more calls")
	// ErrUnknown is wrapped by New for an unregistered strategy name.
	ErrUnknown = errors.New("unknown strategy")
	// ErrNoBackend is wrapped by New when Config.Backends lacks the server
	// a baseline strategy needs (internal/topology starts one).
	ErrNoBackend = errors.New("its server is not set in Config.Backends")
)

// Config is what a strategy is built from. Zero fields a strategy does not
// use are ignored; zero fields it uses take the default in their comment.
type Config struct {
	// Nodes are the Redis servers, one driver each (the run's --driver),
	// opened and closed by lockbench: at least one, and at least the
	// strategy's Info.MinNodes (New refuses fewer). Single-node strategies
	// use Nodes[0], which is also where the workloads keep their data;
	// redlock uses all of them as independent masters; wait-replicas needs
	// Nodes[0] to be a master with a replica. drivers.NativeOf(Nodes[i])
	// returns the client library's own client for a strategy built on a
	// lock library.
	Nodes []drivers.Driver
	// TTL is the lease time (the key's PX, --ttl): at least 1 ms (New
	// refuses less); PX takes whole milliseconds. The command line's
	// default (auto) is 3 x the critical-section work, at least 100 ms.
	TTL time.Duration
	// Params are the values of the strategy's own parameters (Info.Params),
	// by name; a parameter missing here takes its default, and values of
	// parameters the strategy does not declare are ignored, so one set of
	// values can serve every plugin of a scenario. nil: every default. The
	// factory sees every declared parameter present.
	Params registry.Values
	// Backends are the servers of the baseline strategies whose lock or
	// data lives outside Redis (sql-rowlock, sql-guard, zk, etcd).
	Backends Backends
	// Clients is the number of workers that will use the locker (--clients):
	// the baseline strategies size their connection pools by it. 0 means 1.
	Clients int
	// ConstantToken makes every lease store the same value, ConstantValue,
	// instead of a random token: the mistake of claim S4 (seed 004), where
	// an owner check compares against a value every client shares. Only
	// strategies whose Info sets ConstantToken honour it.
	ConstantToken bool
	// Tokens, when set, is told of every token the strategy may store and
	// of every renewal it sends (the liveness oracle): call Config.Sent
	// before each command that may store a token under a lock key and
	// Config.Renewing before each renewal or extend; both do nothing when
	// Tokens is nil. A strategy that never calls them still runs; its
	// results then report the liveness figures as not measured. Nil: not
	// told (the engine sets it unless --liveness-interval is 0 or the
	// token is constant).
	Tokens TokenTracker
	// Prefix is the scenario's key prefix: every key of the scenario
	// starts with it (the engine's "lockbench:<run>:<n>:"). A strategy
	// that subscribes to pub/sub channels of its own names them under it,
	// so that its subscription hears no other run (handoff, which refuses
	// an empty Prefix). "": not known.
	Prefix string
	// Wake is how the run's waiters are woken, for a WaitQueue locker
	// whose release wakes the waiter whose turn it is. Default
	// WakePublish.
	Wake Wake
	// KeyTTL is the safety TTL of the bookkeeping keys a strategy keeps
	// beside its lock keys that must last as long as the run (fencing's
	// counter <key>:fence): every script that writes one sets its TTL to
	// max(KeyTTL, TTL) in the same call, so that a run killed with
	// SIGKILL leaves nothing without a TTL. The engine sets it to the
	// scenario's warm-up + duration + workloads.SafetyMargin (the data
	// keys' TTL). 0: DefaultKeyTTL; negative: New refuses it.
	KeyTTL time.Duration
}

// DefaultKeyTTL is Config.KeyTTL when it is 0: one hour.
const DefaultKeyTTL = time.Hour

// Wake says how a WaitQueue locker's release wakes the waiter whose turn
// it is (Config.Wake).
type Wake uint8

// Wake-ups.
const (
	// WakePublish: PUBLISH on the waiter's WakeChannel (the pubsub retry
	// policy's Hub hears it). The default.
	WakePublish Wake = iota
	// WakeKey: write the key named by the waiter's WakeChannel (a
	// short-lived SET, deleted in the same script), whose invalidation the
	// csc retry policy's tracking hears.
	WakeKey
	// WakeNone: nobody listens (the polling policies): the release wakes
	// no one and spends no command on it.
	WakeNone
)

// ConstantValue is the lock value every client writes with
// Config.ConstantToken ("1", the articles' example).
const ConstantValue = "1"

// token returns a new lease token: random, or ConstantValue.
func (c Config) token() string {
	if c.ConstantToken {
		return ConstantValue
	}
	return NewToken()
}

// Backends are the non-Redis servers of the baseline strategies. A field is
// needed only by the strategies named in its comment.
type Backends struct {
	// MySQL is a github.com/go-sql-driver/mysql DSN of a MariaDB or MySQL
	// server, with the database to use (for example
	// "user:pw@tcp(127.0.0.1:3306)/lockbench"): sql-rowlock, sql-guard.
	MySQL string
	// ZooKeeper are the ZooKeeper servers, host:port each: zk.
	ZooKeeper []string
	// ZooKeeperAuth, when set, is a digest credential user:password: zk
	// adds it to each session and gives its znodes (the root included) an
	// ACL for that identity only. Empty: no credential, open ACLs.
	ZooKeeperAuth string
	// Etcd are the etcd client endpoints, http://host:port each: etcd.
	Etcd []string
	// EtcdUser and EtcdPassword, when EtcdUser is set, log the etcd
	// client in (etcd with authentication enabled).
	EtcdUser, EtcdPassword string
}

// Backend names a server kind besides Redis that a strategy needs.
type Backend string

// Backends the baseline strategies need.
const (
	NoBackend Backend = ""          // Redis only
	MariaDB   Backend = "mariadb"   // Backends.MySQL
	ZooKeeper Backend = "zookeeper" // Backends.ZooKeeper
	Etcd      Backend = "etcd"      // Backends.Etcd
)

// Has reports whether b names a server for backend k (always true for
// NoBackend).
func (b Backends) Has(k Backend) bool {
	switch k {
	case MariaDB:
		return b.MySQL != ""
	case ZooKeeper:
		return len(b.ZooKeeper) > 0
	case Etcd:
		return len(b.Etcd) > 0
	}
	return true
}

// Factory builds a Locker from a Config. New hands it c.Params holding
// every parameter the strategy declared, each checked against its Param
// (read them with c.Params.Int, Duration, String, ...), and a Config
// whose Nodes, TTL and Backends New has checked. An error it returns
// (a combination of values it refuses) is New's error: lockbench reports
// it and does not run the scenario. Register takes a factory of any
// Locker type L, func(Config) (L, error): return the concrete type of the
// lockers (*myLocker), so that Register learns from it the capabilities
// that change how lockbench drives them (OwnRetry, Queued).
type Factory func(c Config) (Locker, error)

// Topology names the server layout a strategy needs.
type Topology string

// Topologies.
const (
	Standalone Topology = "standalone" // one server (Nodes[0])
	Masters    Topology = "masters"    // N independent masters (--nodes)
	Replicated Topology = "replica"    // a master (Nodes[0]) with a replica
	Sentinel   Topology = "sentinel"   // a master and a replica behind three Sentinels
	Cluster    Topology = "cluster"    // a Redis Cluster of three masters
)

// Info describes a registered strategy.
type Info struct {
	// Desc is a one-line description for `lockbench list`: what the lock
	// does, and the source of its algorithm.
	Desc string
	// Topology is the layout lockbench starts for it (Config.Nodes are
	// those servers, or the --addr list). Default Standalone.
	Topology Topology
	// ConstantToken: the strategy honours Config.ConstantToken.
	ConstantToken bool
	// Backend is the server besides Redis it needs (zk, etcd: the lock;
	// sql-*: the data). Default NoBackend.
	Backend Backend
	// Workloads, when set, are the only workloads it runs (the lock-free
	// and SQL strategies have a data path in flash-sale and hot-key only).
	Workloads []string
	// Guard is the write guard the strategy asks the workload for when
	// --guard is auto: "cas" (an optimistic check of the value read),
	// "fence" (reject a write whose fencing token is below the highest
	// seen) or "decr" (the conditional decrement). Default "": none.
	Guard string
	// Drivers, when set, are the only Redis drivers it runs on, by
	// registered name (drivers.Names: "goredis", "rueidis"), for a lock
	// library built on one client (redislock on go-redis, rueidislock on
	// rueidis); lockbench skips its scenarios on the others with a
	// message, as it skips a baseline whose server is not installed, and
	// so does locktest. Default (nil): every driver.
	Drivers []string
	// OwnsRetry is set by Register, never given to it: true when the
	// factory's locker type implements OwnRetry (its TryAcquire runs a
	// lock library's own acquire loop until the lock is taken, the
	// library gives up with ErrNotAcquired or ctx ends). lockbench's
	// retry policies are not layered on top: its scenarios run with
	// retry.Library() whatever --retry says, and the table's retry column
	// says "library".
	OwnsRetry bool
	// Queues is set by Register, never given to it: true when the
	// factory's locker type implements Queued (its TryAcquire waits in
	// the lock's own queue until the lock is granted or ctx ends: the
	// ZooKeeper recipe, etcd's mutex, a row lock, handoff's Redis queue).
	// lockbench's retry policies do not apply: its scenarios run once,
	// with retry.Queue() whatever --retry says, and the table's retry
	// column says "queue".
	Queues bool
	// Reads, Reentrant and Lockless are set by Register, never given to
	// it, from the factory's locker type as OwnsRetry is: it implements
	// ReadLocker (a read side, which the read role of --mix takes),
	// Reentrant (its holder may acquire the lock again: the nested role)
	// or Lockless (no lock at all: no role).
	Reads, Reentrant, Lockless bool
	// WaitQueue is set by Register, never given to it: the factory's
	// locker type implements WaitQueue (its waiters queue in Redis and a
	// release wakes the head: fair). With a polling retry policy (not
	// pubsub or csc) nobody is woken and a free lock waits for the head's
	// next attempt: the run says so (docs/strategies.md, "fair").
	WaitQueue bool
	// Unsafe: the strategy is a known-broken pattern kept to show its
	// failure (naive): violations are what it measures, so a regression
	// gate's baseline that shows them is not invalid. Default false: the
	// strategy promises no violation without a fault.
	Unsafe bool
	// Check, when set, checks the strategy's parameter values together
	// (Params' own checks see one value at a time) and what it needs
	// outside lockbench (an external adapter's runtime and build): an
	// error refuses the run before any server starts (exit 2). The
	// values are every declared parameter's. Default nil: no check.
	Check func(v registry.Values) error
	// MinNodes is the fewest Redis nodes it runs on (New refuses fewer).
	// Default (0) 1; redlock: 3, so that a majority survives a failure.
	MinNodes int
	// Params are the strategy's own options (see Param): each becomes a
	// run flag (--NAME), a scenario-file field and a key of the result's
	// params; the Factory reads their values from Config.Params. A name
	// another plugin of the scenario also declares takes one value for
	// both. Default: none.
	Params []registry.Param
}

type entry struct {
	info Info
	f    Factory
}

var reg = registry.New[entry]("strategy")

// Register makes a strategy available under name (lower-case words
// joined by dashes, as --strategy takes it), with its description and
// needs, to New, the command line (lockbench.Main) and `lockbench list`.
// Call it from an init function, before Main runs.
//
// f's return type L tells Register what the lockers are: Info.OwnsRetry
// is whether L implements OwnRetry, Info.Queues whether it implements
// Queued, each fact declared once, by the method. Return the concrete
// type (func(c Config) (*myLocker, error)); with L = Locker those are
// false, and New refuses a locker that implements either (an error that
// says to return the concrete type).
//
// It panics on an empty or duplicate name, a parameter declared wrong (a
// badly formed or repeated name, a Default of an unsupported type, a
// Default its own Check refuses), a nil factory, or Info.OwnsRetry or
// Info.Queues set by the caller: programming errors, found at start-up.
func Register[L Locker](name string, info Info, f func(c Config) (L, error)) {
	if f == nil {
		panic("strategies: Register with a nil factory")
	}
	if info.OwnsRetry || info.Queues || info.Reads || info.Reentrant || info.Lockless || info.WaitQueue {
		panic("strategies: Register " + name + ": Info.OwnsRetry, Queues, Reads, Reentrant, Lockless and WaitQueue are set from the factory's locker type (implement OwnRetry, Queued, ReadLocker, Reentrant, Lockless or WaitQueue on it), not given")
	}
	t := reflect.TypeFor[L]()
	info.OwnsRetry = t.Implements(reflect.TypeFor[OwnRetry]())
	info.Queues = t.Implements(reflect.TypeFor[Queued]())
	info.Reads = t.Implements(reflect.TypeFor[ReadLocker]())
	info.Reentrant = t.Implements(reflect.TypeFor[Reentrant]())
	info.Lockless = t.Implements(reflect.TypeFor[Lockless]())
	info.WaitQueue = t.Implements(reflect.TypeFor[WaitQueue]())
	if info.Topology == "" {
		info.Topology = Standalone
	}
	info.MinNodes = max(info.MinNodes, 1)
	factory := func(c Config) (Locker, error) {
		l, err := f(c)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return l, nil
	}
	reg.Register(name, info.Desc, info.Params, entry{info, factory})
}

// InfoOf returns what name was registered with (the zero Info if unknown).
func InfoOf(name string) Info {
	e, _ := reg.Get(name)
	return e.Value.info
}

// RunsWith reports whether strategy name runs workload wl.
func RunsWith(name, wl string) bool {
	e, _ := reg.Get(name)
	if len(e.Value.info.Workloads) == 0 {
		return true
	}
	for _, w := range e.Value.info.Workloads {
		if w == wl {
			return true
		}
	}
	return false
}

// RunsOn reports whether strategy name runs on the Redis driver drv
// (Info.Drivers).
func RunsOn(name, drv string) bool {
	e, _ := reg.Get(name)
	ds := e.Value.info.Drivers
	if len(ds) == 0 {
		return true
	}
	for _, d := range ds {
		if d == drv {
			return true
		}
	}
	return false
}

// TopologyOf returns the layout the strategy needs (Standalone if unknown).
func TopologyOf(name string) Topology {
	if e, ok := reg.Get(name); ok {
		return e.Value.info.Topology
	}
	return Standalone
}

// Names lists the registered strategies, sorted.
func Names() []string { return reg.Names() }

// Describe returns a strategy's one-line description ("" if unknown).
func Describe(name string) string {
	e, _ := reg.Get(name)
	return e.Desc
}

// Known reports whether name is registered.
func Known(name string) bool {
	_, ok := reg.Get(name)
	return ok
}

// New builds the strategy registered as name. Errors: ErrUnknown (with the
// valid names); no nodes, fewer than Info.MinNodes, a TTL under 1 ms;
// ErrNoBackend; a parameter value its Param refuses; the Factory's own
// error; or a parameter the Factory reads but the strategy did not declare
// in Info.Params (registry.UndeclaredError: the getters of c.Params panic
// with it, and New returns it).
func New(name string, c Config) (_ Locker, err error) {
	e, err := reg.Lookup(name, ErrUnknown)
	if err != nil {
		return nil, err
	}
	if len(c.Nodes) == 0 {
		return nil, errors.New("strategies: Config.Nodes is empty")
	}
	if err := e.Value.info.CheckNodes(name, len(c.Nodes)); err != nil {
		return nil, err
	}
	if c.TTL < time.Millisecond {
		return nil, fmt.Errorf("strategies: ttl %v must be at least 1ms", c.TTL)
	}
	switch {
	case c.KeyTTL < 0:
		return nil, fmt.Errorf("strategies: key ttl %v is negative", c.KeyTTL)
	case c.KeyTTL == 0:
		c.KeyTTL = DefaultKeyTTL
	}
	if !c.Backends.Has(e.Value.info.Backend) {
		return nil, fmt.Errorf("strategies: %s needs a %s server: %w", name, e.Value.info.Backend, ErrNoBackend)
	}
	c.Params = registry.Pick(e.Params, c.Params)
	if errs := registry.Check(name+": ", e.Params, c.Params); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	defer registry.Recover(&err, "strategy "+name+": ")
	l, err := e.Value.f(c)
	if err != nil {
		return nil, err
	}
	if err := e.Value.info.checkCaps(name, l); err != nil {
		if cl, ok := l.(io.Closer); ok {
			cl.Close()
		}
		return nil, err
	}
	return l, nil
}

// checkCaps refuses a locker that implements OwnRetry or Queued when its
// strategy's factory type did not show it (Register found neither on L):
// lockbench would drive it as a lock it retries itself.
func (i Info) checkCaps(name string, l Locker) error {
	for _, c := range []struct {
		has, derived bool
		iface        string
	}{{isOwnRetry(l), i.OwnsRetry, "OwnRetry"}, {isQueued(l), i.Queues, "Queued"}} {
		if c.has && !c.derived {
			return fmt.Errorf("strategies: %s: its locker %T implements strategies.%s, but its factory returns a type that does not: return %T from the factory, so that Register sees it", name, l, c.iface, l)
		}
	}
	return nil
}

func isOwnRetry(l Locker) bool { _, ok := l.(OwnRetry); return ok }
func isQueued(l Locker) bool   { _, ok := l.(Queued); return ok }

// CheckNodes reports a layout of n Redis nodes too small for strategy name.
func (i Info) CheckNodes(name string, n int) error {
	if n < i.MinNodes {
		return fmt.Errorf("%s needs at least %d independent masters (a majority must survive a failure); got %d (--nodes, or the --addr list)", name, i.MinNodes, n)
	}
	return nil
}

// Lookup returns what name was registered with, or an error wrapping
// ErrUnknown that suggests the nearest name and lists the valid ones.
func Lookup(name string) (Info, error) {
	e, err := reg.Lookup(name, ErrUnknown)
	return e.Value.info, err
}

// ParamsOf returns the parameters strategy name declared (nil if unknown).
func ParamsOf(name string) []registry.Param {
	e, _ := reg.Get(name)
	return e.Params
}

// Entry is one registered strategy: its Name, Desc, Params and Info
// (Value).
type Entry = registry.Entry[Info]

// Entries lists the registered strategies with their descriptions and
// parameters, sorted by name.
func Entries() []Entry {
	var out []registry.Entry[Info]
	for _, e := range reg.Entries() {
		out = append(out, registry.Entry[Info]{Name: e.Name, Desc: e.Desc, Params: e.Params, Value: e.Value.info})
	}
	return out
}

// NewToken returns 128 random bits from crypto/rand, hex-encoded. The bits
// are read 4 KiB at a time into pooled buffers, so that a token costs no
// system call.
func NewToken() string {
	var b [2 * tokenBytes]byte
	return string(hexToken(&b))
}

// tokenBytes is a token's size in random bytes (hex: twice as many
// characters).
const tokenBytes = 16

// hexToken fills dst with a new token's hex characters (see NewToken) and
// returns it as a slice.
func hexToken(dst *[2 * tokenBytes]byte) []byte {
	tb := tokenBufs.Get().(*tokenBuf)
	if tb.n+tokenBytes > len(tb.b) {
		if _, err := rand.Read(tb.b[:]); err != nil {
			panic("crypto/rand: " + err.Error()) // never fails on Linux
		}
		tb.n = 0
	}
	hex.Encode(dst[:], tb.b[tb.n:tb.n+tokenBytes])
	tb.n += tokenBytes
	tokenBufs.Put(tb)
	return dst[:]
}

type tokenBuf struct {
	b [4096]byte
	n int // bytes used
}

var tokenBufs = sync.Pool{New: func() any { return &tokenBuf{n: 4096} }}

// lease is the plain single-node lease that naive and atomic share.
type lease struct {
	key, token string
	owner      releaser
}

type releaser interface {
	release(ctx context.Context, key, token string) error
}

func (l *lease) Key() string                       { return l.key }
func (l *lease) Token() string                     { return l.token }
func (l *lease) Release(ctx context.Context) error { return l.owner.release(ctx, l.key, l.token) }
