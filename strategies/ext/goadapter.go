package ext

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
)

// EnvGoAdapter names the Go adapter a lockbench process serves instead of
// running (ServeIfAdapter): "null" or "atomic". lockbench starts itself
// with it for ext-null and ext-atomic.
const EnvGoAdapter = "LOCKBENCH_EXT_GO_ADAPTER"

// GoAdapterVersion is the version the Go adapters report in hello.
const GoAdapterVersion = "1"

func init() {
	self := func(string) ([]string, error) {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		return []string{exe}, nil
	}
	Register("ext-null", Adapter{
		Desc: "the protocol's own cost: a Go adapter that grants every acquire at once and touches no key " +
			"(no lock at all: run it on keys of the clients' own, lock-cycle --own-keys, as lockbench harness does)",
		Command: self, env: []string{EnvGoAdapter + "=null"}, Unsafe: true,
	})
	Register("ext-atomic", Adapter{
		Desc: "atomic behind the external-lock protocol: a Go adapter doing SET NX PX and a compare-and-delete release " +
			"(redis.io distlock, single instance) with lockbench's token; against atomic it measures what the protocol costs",
		Command: self, env: []string{EnvGoAdapter + "=atomic"},
		Params: []registry.Param{{Name: "extend", Doc: "ext-atomic: off, or on (its leases are strategies.Extenders: a compare-and-PEXPIRE after the work)",
			Default: "off", Check: registry.OneOf("off", "on")}},
	})
}

// ServeIfAdapter serves the Go adapter named by EnvGoAdapter on stdin and
// stdout and exits the process when stdin ends; without that variable it
// returns at once. lockbench.Main calls it first; so must the TestMain
// of a test binary that runs ext-null or ext-atomic.
func ServeIfAdapter() {
	kind := os.Getenv(EnvGoAdapter)
	if kind == "" {
		return
	}
	if err := Serve(kind, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "lockbench go adapter:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Serve runs Go adapter kind ("null" or "atomic") over r and w until r
// ends.
func Serve(kind string, r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	if !sc.Scan() {
		return sc.Err()
	}
	var h Hello
	if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
		return err
	}
	out := &lineWriter{w: bufio.NewWriter(w)}
	hr := HelloReply{Op: "hello", V: Version, Name: "go-" + kind, Library: "lockbench go adapter " + kind,
		Version: GoAdapterVersion, Runtime: runtime.Version(), Caps: Caps{CallerToken: true}}
	var a goAdapter
	if open, ok := goAdapters[kind]; !ok {
		hr.Error = "unknown go adapter " + kind
	} else {
		var closer func()
		var err error
		if a, closer, err = open(h, &hr); err != nil {
			hr.Error = err.Error()
		} else if closer != nil {
			defer closer()
		}
	}
	if h.V != Version {
		hr.Error = fmt.Sprintf("protocol version %d: this adapter speaks %d", h.V, Version)
	}
	out.send(hr)
	if hr.Error != "" {
		return nil
	}
	if n, ok := a.(notifier); ok {
		n.notify(out.send)
	}
	var wg sync.WaitGroup
	for sc.Scan() {
		var q request
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if rep, ok := a.do(q); ok {
				rep.ID = q.ID
				out.send(rep)
			}
		}()
	}
	wg.Wait()
	return sc.Err()
}

// lineWriter writes messages as lines; a burst of concurrent sends is
// flushed once, by its last sender.
type lineWriter struct {
	mu     sync.Mutex
	queued atomic.Int64
	w      *bufio.Writer
}

func (l *lineWriter) send(m any) {
	b, _ := json.Marshal(m)
	b = append(b, '\n')
	l.queued.Add(1)
	l.mu.Lock()
	l.w.Write(b)
	if l.queued.Add(-1) == 0 {
		l.w.Flush()
	}
	l.mu.Unlock()
}

// goAdapters open the Go adapters by kind (EnvGoAdapter): the adapter,
// a function that closes what it opened (or nil), or an error for the
// hello reply. open may set hr's caps.
var goAdapters = map[string]func(h Hello, hr *HelloReply) (goAdapter, func(), error){
	"null": func(Hello, *HelloReply) (goAdapter, func(), error) { return &nullAdapter{}, nil, nil },
	"atomic": func(h Hello, hr *HelloReply) (goAdapter, func(), error) {
		if len(h.Servers) == 0 {
			return nil, nil, fmt.Errorf("atomic needs a server")
		}
		s := h.Servers[0]
		d, err := drivers.Open("goredis", drivers.Options{Endpoint: drivers.Endpoint{Addr: s.Addr, Username: s.Username,
			Password: s.Password, DB: s.DB}, PoolSize: h.Clients + 4})
		if err != nil {
			return nil, nil, err
		}
		hr.Caps.Extend = h.Params["extend"] == "on"
		return &atomicAdapter{d: d, ttl: time.Duration(h.TTLms) * time.Millisecond, leases: map[int64]atomicLease{}},
			func() { d.Close() }, nil
	},
}

// notifier is a goAdapter that sends notices of its own (lost): Serve
// gives it the function that sends one.
type notifier interface{ notify(send func(any)) }

// goAdapter serves one request; ok false: no reply (abandon).
type goAdapter interface {
	do(q request) (rep reply, ok bool)
}

type nullAdapter struct{ next atomic.Int64 }

func (n *nullAdapter) do(q request) (reply, bool) {
	switch q.Op {
	case "acquire":
		return reply{OK: true, Lease: n.next.Add(1), Token: q.Token}, true
	case "abandon":
		return reply{}, false
	case "release", "extend":
		return reply{OK: true}, true
	}
	return reply{Error: "unsupported", Msg: q.Op}, true
}

type atomicLease struct{ key, token string }

type atomicAdapter struct {
	d      drivers.Driver
	ttl    time.Duration
	next   atomic.Int64
	mu     sync.Mutex
	leases map[int64]atomicLease
}

var (
	atomicRelease = drivers.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`)
	atomicExtend  = drivers.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) end return 0`)
)

func (a *atomicAdapter) do(q request) (reply, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	redisErr := func(err error) reply { return reply{Error: "redis", Msg: err.Error()} }
	switch q.Op {
	case "acquire":
		ttl := a.ttl
		if q.TTLms > 0 {
			ttl = time.Duration(q.TTLms) * time.Millisecond
		}
		ok, err := a.d.SetNX(ctx, q.Key, q.Token, ttl)
		if err != nil {
			return redisErr(err), true
		}
		if !ok {
			return reply{Error: "not_acquired"}, true
		}
		id := a.next.Add(1)
		a.mu.Lock()
		a.leases[id] = atomicLease{q.Key, q.Token}
		a.mu.Unlock()
		return reply{OK: true, Lease: id, Token: q.Token}, true
	case "release", "extend", "abandon":
		a.mu.Lock()
		ls, held := a.leases[q.Lease]
		if q.Op != "extend" {
			delete(a.leases, q.Lease)
		}
		a.mu.Unlock()
		if q.Op == "abandon" {
			return reply{}, false
		}
		if !held {
			return reply{Error: "not_owner", Msg: "no such lease"}, true
		}
		var r drivers.Reply
		var err error
		if q.Op == "release" {
			r, err = a.d.Eval(ctx, atomicRelease, []string{ls.key}, ls.token)
		} else {
			r, err = a.d.Eval(ctx, atomicExtend, []string{ls.key}, ls.token, fmt.Sprint(max(q.TTLms, 1)))
		}
		if err != nil {
			return redisErr(err), true
		}
		if r.Int != 1 {
			return reply{Error: "not_owner"}, true
		}
		return reply{OK: true}, true
	}
	return reply{Error: "unsupported", Msg: q.Op}, true
}
