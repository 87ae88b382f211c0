package ext

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/strategies"
)

// Version is the protocol version lockbench speaks (docs/external-locks.md).
const Version = 1

// MaxLine is the longest line either side may send, in bytes (1 MiB).
const MaxLine = 1 << 20

// HelloTimeout bounds an adapter's start: from its exec to its hello
// reply (a JVM and its Redis connections included).
var HelloTimeout = 60 * time.Second

// ExitGrace is how long an adapter has to exit after its stdin is closed
// before it is killed.
const ExitGrace = 5 * time.Second

// Server is one Redis server as the hello message gives it.
type Server struct {
	Addr       string   `json:"addr"`
	Username   string   `json:"username"`
	Password   string   `json:"password"`
	DB         int      `json:"db"`
	TLS        bool     `json:"tls"`
	Sentinels  []string `json:"sentinels,omitempty"`
	MasterName string   `json:"master_name,omitempty"`
	Cluster    bool     `json:"cluster,omitempty"`
}

// Hello is lockbench's first message.
type Hello struct {
	Op      string            `json:"op"`
	V       int               `json:"v"`
	Lock    string            `json:"lock"`
	TTLms   int64             `json:"ttl_ms"`
	Clients int               `json:"clients"`
	Prefix  string            `json:"prefix"`
	Servers []Server          `json:"servers"`
	Params  map[string]string `json:"params"`
}

// Caps are what an adapter's lock can do (its hello reply).
type Caps struct {
	Renews      bool `json:"renews"`
	Lost        bool `json:"lost"`
	Reentrant   bool `json:"reentrant"`
	FIFO        bool `json:"fifo"`
	Read        bool `json:"read"`
	Fenced      bool `json:"fenced"`
	Permits     int  `json:"permits"`
	MultiKey    bool `json:"multi_key"`
	CallerToken bool `json:"caller_token"`
	Extend      bool `json:"extend"`
}

// HelloReply is the adapter's first message.
type HelloReply struct {
	Op      string `json:"op"`
	V       int    `json:"v"`
	Name    string `json:"name"`
	Library string `json:"library"`
	Version string `json:"version"`
	Runtime string `json:"runtime"`
	Caps    Caps   `json:"caps"`
	Error   string `json:"error"`
}

// request is one message from lockbench after hello.
type request struct {
	ID     int64    `json:"id,omitempty"`
	Op     string   `json:"op"`
	Client *int     `json:"client,omitempty"`
	Key    string   `json:"key,omitempty"`
	Keys   []string `json:"keys,omitempty"`
	Mode   string   `json:"mode,omitempty"`
	Token  string   `json:"token,omitempty"`
	TTLms  int64    `json:"ttl_ms,omitempty"`
	WaitMs *int64   `json:"wait_ms,omitempty"`
	Lease  int64    `json:"lease,omitempty"`
}

// reply is one message from the adapter after hello: a reply (ID set) or
// a notice (Op "lost").
type reply struct {
	ID    int64  `json:"id"`
	Op    string `json:"op"`
	OK    bool   `json:"ok"`
	Lease int64  `json:"lease"`
	Token string `json:"token"`
	Fence int64  `json:"fence"`
	Error string `json:"error"`
	Msg   string `json:"msg"`
}

// Errors of the protocol.
var (
	// ErrAdapter wraps an adapter's failure: it exited, wrote a line that
	// is not protocol, or answered hello with an error.
	ErrAdapter = errors.New("external lock adapter")
	errClosed  = errors.New("adapter stopped")
)

// proc is one running adapter and its multiplexed requests.
type proc struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	hello HelloReply

	wmu    sync.Mutex
	queued atomic.Int64 // senders in send
	w      *bufio.Writer
	nextID atomic.Int64

	mu      sync.Mutex
	pending map[int64]chan reply
	lost    map[int64]func()
	// renewing are the leases' functions to run on a renewing notice.
	renewing map[int64]func()
	dead     error // set once the reader ends
	stderr   *tail
	done     chan struct{}
}

// start runs argv, sends h and waits for the hello reply.
func start(ctx context.Context, name string, argv, env []string, h Hello) (*proc, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("%w %s: no command", ErrAdapter, name)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	p := &proc{name: name, cmd: cmd, pending: map[int64]chan reply{}, lost: map[int64]func(){}, renewing: map[int64]func(){},
		stderr: &tail{max: 8 << 10}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	setpgid(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrAdapter, name, err)
	}
	p.stdin, p.w = stdin, bufio.NewWriterSize(stdin, 64<<10)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), MaxLine)

	h.Op, h.V = "hello", Version
	helloc := make(chan error, 1)
	go func() {
		if !sc.Scan() {
			helloc <- fmt.Errorf("exited before its hello reply")
			return
		}
		if err := json.Unmarshal(sc.Bytes(), &p.hello); err != nil || p.hello.Op != "hello" {
			helloc <- fmt.Errorf("its first line is not a hello reply: %.200q", sc.Text())
			return
		}
		helloc <- nil
		p.read(sc)
	}()
	hctx, cancel := context.WithTimeout(ctx, HelloTimeout)
	defer cancel()
	if err := p.send(h); err != nil {
		// It did not read its hello: what it wrote (or its exit) says why.
		select {
		case e := <-helloc:
			if e == nil {
				e = p.checkHello()
			}
			if e != nil {
				err = e
			}
		case <-time.After(ExitGrace):
		}
		p.Close()
		return nil, p.fail(err)
	}
	select {
	case err = <-helloc:
	case <-hctx.Done():
		err = fmt.Errorf("no hello reply within %v", HelloTimeout)
	}
	if err == nil {
		err = p.checkHello()
	}
	if err != nil {
		p.Close()
		return nil, p.fail(err)
	}
	return p, nil
}

// checkHello returns the error of a hello reply that refuses (its error)
// or is not one lockbench can use.
func (p *proc) checkHello() error {
	switch {
	case p.hello.Error != "":
		return errors.New(cut(p.hello.Error))
	case p.hello.V != Version:
		return fmt.Errorf("speaks protocol version %d; lockbench speaks %d", p.hello.V, Version)
	case p.hello.Name == "" || p.hello.Library == "" || p.hello.Version == "":
		return fmt.Errorf("its hello reply lacks name, library or version (it said name %q, library %q, version %q)",
			cut(p.hello.Name), cut(p.hello.Library), cut(p.hello.Version))
	}
	return nil
}

// failDead is fail for an adapter that can serve no more calls.
func (p *proc) failDead(err error) error {
	e := p.fail(err).(*adapterError)
	e.dead = true
	return e
}

// fail wraps err with the adapter's name and its stderr's last lines.
func (p *proc) fail(err error) error {
	msg := fmt.Sprintf("%v %s: %v", ErrAdapter, p.name, err)
	if t := strings.TrimSpace(p.stderr.String()); t != "" {
		msg += "; its stderr ended with:\n" + t
	}
	return &adapterError{msg: msg}
}

type adapterError struct {
	msg  string
	dead bool // the adapter exited or broke the protocol: strategies.ErrFatal
}

func (e *adapterError) Error() string { return e.msg }
func (e *adapterError) Unwrap() []error {
	if e.dead {
		return []error{ErrAdapter, strategies.ErrFatal}
	}
	return []error{ErrAdapter}
}

// ErrorKind counts the error as "ext-adapter" (drivers.ErrorKind).
func (e *adapterError) ErrorKind() string { return "ext-adapter" }

// read dispatches the adapter's lines until its stdout ends.
func (p *proc) read(sc *bufio.Scanner) {
	defer close(p.done)
	var err error
	for sc.Scan() {
		var r reply
		if e := json.Unmarshal(sc.Bytes(), &r); e != nil {
			err = fmt.Errorf("wrote a line that is not JSON: %.200q", sc.Text())
			break
		}
		if r.Op == "lost" || r.Op == "renewing" {
			p.mu.Lock()
			f := p.lost[r.Lease]
			if r.Op == "renewing" {
				f = p.renewing[r.Lease]
			}
			p.mu.Unlock()
			if f != nil {
				f()
			}
			continue
		}
		p.mu.Lock()
		ch := p.pending[r.ID]
		delete(p.pending, r.ID)
		p.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
	if err == nil {
		err = sc.Err()
	}
	if err == nil {
		err = errClosed
	}
	p.mu.Lock()
	p.dead = err
	for id, ch := range p.pending {
		close(ch)
		delete(p.pending, id)
	}
	p.mu.Unlock()
}

// send writes one message as one line. A burst of concurrent sends is
// flushed once, by its last sender; a write error is returned to the
// sender that flushed (the others learn of it as the adapter's exit).
func (p *proc) send(m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	// Senders that queue behind this one leave the flush to the last of
	// them: one write to the pipe carries a burst of requests.
	p.queued.Add(1)
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.w.Write(b)
	if p.queued.Add(-1) > 0 {
		return nil
	}
	return p.w.Flush()
}

// call sends r and waits for its reply or ctx's end. A reply that comes
// after ctx ended goes to late (nil: dropped).
func (p *proc) call(ctx context.Context, r request, late func(reply)) (reply, error) {
	r.ID = p.nextID.Add(1)
	ch := make(chan reply, 1)
	p.mu.Lock()
	if p.dead != nil {
		err := p.dead
		p.mu.Unlock()
		return reply{}, p.failDead(err)
	}
	p.pending[r.ID] = ch
	p.mu.Unlock()
	if err := p.send(r); err != nil {
		p.mu.Lock()
		delete(p.pending, r.ID)
		p.mu.Unlock()
		return reply{}, p.failDead(err)
	}
	select {
	case rep, ok := <-ch:
		if !ok {
			p.mu.Lock()
			err := p.dead
			p.mu.Unlock()
			return reply{}, p.failDead(err)
		}
		return rep, nil
	case <-ctx.Done():
		if late != nil {
			go func() {
				if rep, ok := <-ch; ok {
					late(rep)
				}
			}()
		} else {
			p.mu.Lock()
			delete(p.pending, r.ID)
			p.mu.Unlock()
		}
		return reply{}, ctx.Err()
	}
}

// onLost makes lost run when the adapter reports lease lost, and
// renewing when it reports a renewal of it; nil forgets.
func (p *proc) onLost(lease int64, lost, renewing func()) {
	p.mu.Lock()
	if lost == nil {
		delete(p.lost, lease)
	} else {
		p.lost[lease] = lost
	}
	if renewing == nil {
		delete(p.renewing, lease)
	} else {
		p.renewing[lease] = renewing
	}
	p.mu.Unlock()
}

// Close closes the adapter's stdin and waits for it to exit, killing it
// after ExitGrace.
func (p *proc) Close() error {
	p.wmu.Lock()
	p.stdin.Close()
	p.wmu.Unlock()
	waited := make(chan error, 1)
	go func() { waited <- p.cmd.Wait() }()
	select {
	case <-waited:
	case <-time.After(ExitGrace):
		p.kill()
		<-waited
	}
	return nil
}

func (p *proc) kill() {
	if p.cmd.Process != nil {
		killGroup(p.cmd)
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, b...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
		if i := bytes.IndexByte(t.b, '\n'); i >= 0 {
			t.b = t.b[i+1:]
		}
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// cut shortens s for a message.
func cut(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
