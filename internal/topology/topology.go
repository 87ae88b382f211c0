// Package topology starts and stops real redis-server processes on loopback
// for a run or a test: one standalone server, or N independent masters (the
// shape Redlock needs). Every server binds 127.0.0.1 only, keeps no data on
// disk (no RDB, no AOF), requires a random password, lives in a temporary
// directory of its own, and is stopped and its directory removed by Stop.
// The children get SIGKILL from the kernel if lockbench itself dies
// (Linux parent-death signal), so no exit path leaves a server behind.
package topology

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrNoRedisServer is returned by Start when redis-server is not on PATH.
var ErrNoRedisServer = errors.New("redis-server not found on PATH: install it (for example `apt-get install redis-server`, or `make run`, which does it), or pass --addr host:port to use your own servers")

// Server is one redis-server process started by Start.
type Server struct {
	// Addr is 127.0.0.1:port.
	Addr string
	// Password is the server's requirepass (random hex, 32 chars).
	Password string
	// Pid is the operating-system process id.
	Pid int
	// Dir is the server's temporary working directory.
	Dir string

	mu      sync.Mutex // guards cmd, exited, Pid across restarts
	cmd     *exec.Cmd
	exited  chan struct{}
	once    sync.Once
	bin     string
	args    []string
	logFile string
	outFile string // when set, the process's stdout and stderr go there
	// ready, when set, replaces the Redis PING as the readiness check.
	ready func() error
}

// Topology is a set of servers started together.
type Topology struct {
	Servers []*Server
	// Sentinels are the Sentinel processes of a StartSentinel layout.
	Sentinels []*Server
	busPorts  []int // cluster bus ports of a StartCluster layout
}

// Addrs returns the servers' addresses in start order.
func (t *Topology) Addrs() []string {
	out := make([]string, len(t.Servers))
	for i, s := range t.Servers {
		out[i] = s.Addr
	}
	return out
}

// live holds every server not yet stopped, so that KillAll can end them
// from a signal handler.
var (
	liveMu sync.Mutex
	live   = map[*Server]struct{}{}
)

// Start launches n independent redis-server masters (n = 1: standalone),
// each with its own random password, and waits until each answers PING
// (at most 10 s each). On any error the servers already started are
// stopped. Errors: ErrNoRedisServer, a start failure with the server's log
// tail, or ctx's error.
func Start(ctx context.Context, n int) (*Topology, error) { return start(ctx, n, false) }

// StartShared is Start with one random password for all n servers (as a
// deployment whose nodes share a requirepass), so that they can be given
// as one --addr list with one password, as `run --procs` gives them to
// its child processes.
func StartShared(ctx context.Context, n int) (*Topology, error) { return start(ctx, n, true) }

func start(ctx context.Context, n int, shared bool) (*Topology, error) {
	if n < 1 {
		return nil, fmt.Errorf("topology: need at least 1 server, got %d", n)
	}
	bin, err := redisServer()
	if err != nil {
		return nil, err
	}
	t := &Topology{}
	pw := randomHex(16)
	for i := 0; i < n; i++ {
		if !shared {
			pw = randomHex(16)
		}
		s, err := startWithPassword(ctx, bin, pw)
		if err != nil {
			t.Stop()
			return nil, err
		}
		t.Servers = append(t.Servers, s)
	}
	return t, nil
}

// StartReplicated launches a master and one replica of it (replicaof),
// both on loopback with the same random requirepass and masterauth, and
// waits until the replica reports master_link_status:up and the master's
// WAIT 1 counts it. Servers[0] is the master, Servers[1] the replica.
func StartReplicated(ctx context.Context) (*Topology, error) {
	bin, err := redisServer()
	if err != nil {
		return nil, err
	}
	t := &Topology{}
	m, err := startMaster(ctx, bin)
	if err != nil {
		return nil, err
	}
	t.Servers = append(t.Servers, m)
	r, err := startReplica(ctx, bin, m.Addr, m)
	if err != nil {
		t.Stop()
		return nil, err
	}
	t.Servers = append(t.Servers, r)
	deadline := time.Now().Add(10 * time.Second)
	for {
		// The replica's link is up, and the master counts it online and
		// acknowledging: a WAIT then returns 1 at once (wait-replicas
		// depends on it from its first acquire).
		info, err := Command(r.Addr, r.Password, time.Second, "INFO", "replication")
		if err == nil && strings.Contains(info, "master_link_status:up") {
			var acked string
			if acked, err = Command(m.Addr, m.Password, time.Second, "WAIT", "1", "100"); err == nil && strings.TrimSpace(acked) == "1" {
				return t, nil
			}
		}
		if time.Now().After(deadline) {
			t.Stop()
			return nil, fmt.Errorf("topology: replica %s did not link to master %s and acknowledge a WAIT within 10 s (%v)", r.Addr, m.Addr, err)
		}
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stop ends every server (SIGTERM, then SIGKILL after 3 s) and removes its
// directory. It is safe to call more than once and from several goroutines.
func (t *Topology) Stop() {
	if t == nil {
		return
	}
	var wg sync.WaitGroup
	for _, s := range append(append([]*Server(nil), t.Servers...), t.Sentinels...) {
		wg.Add(1)
		go func(s *Server) { defer wg.Done(); s.Stop() }(s)
	}
	wg.Wait()
}

// KillAll sends SIGKILL to every server this process started and has not
// stopped yet, and removes their directories. It is for the last-resort
// path (a second Ctrl-C) and does not wait long.
func KillAll() {
	liveMu.Lock()
	servers := make([]*Server, 0, len(live))
	for s := range live {
		servers = append(servers, s)
	}
	liveMu.Unlock()
	for _, s := range servers {
		s.kill()
	}
}

func startOne(ctx context.Context, bin string, extra ...string) (*Server, error) {
	return startWithPassword(ctx, bin, randomHex(16), extra...)
}

// startWithPassword starts a server whose requirepass is pw from its
// first start (and on every Restart).
func startWithPassword(ctx context.Context, bin, pw string, extra ...string) (*Server, error) {
	return retryPorts(ctx, func() (*Server, error) { return launch(ctx, bin, pw, extra...) })
}

func launch(ctx context.Context, bin, pw string, extra ...string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("topology: find a free port: %w", err)
	}
	dir, err := os.MkdirTemp("", "lockbench-redis-")
	if err != nil {
		return nil, fmt.Errorf("topology: temp dir: %w", err)
	}
	// owner.pid lets a later run remove this directory if lockbench is
	// killed before it can (SIGKILL ends the server, not the directory).
	_ = os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644)
	s := &Server{
		Addr:     net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Password: pw,
		Dir:      dir,
		exited:   make(chan struct{}),
	}
	logFile := filepath.Join(dir, "redis.log")
	args := []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--protected-mode", "yes",
		"--requirepass", pw,
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
		"--logfile", logFile,
		"--daemonize", "no",
		"--maxclients", "20000",
		"--repl-diskless-sync-delay", "0", // a replica syncs at once
		"--enable-debug-command", "local", // DEBUG SLEEP stalls a server in tests
	}
	s.bin, s.args, s.logFile = bin, append(args, extra...), logFile
	if err := s.spawn(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	liveMu.Lock()
	live[s] = struct{}{}
	liveMu.Unlock()

	if err := s.waitReady(ctx, 10*time.Second); err != nil {
		tail := logTail(logFile)
		s.Stop()
		if tail != "" {
			return nil, fmt.Errorf("topology: redis-server on %s did not start: %w; its log ends:\n%s", s.Addr, err, tail)
		}
		return nil, fmt.Errorf("topology: redis-server on %s did not start: %w", s.Addr, err)
	}
	return s, nil
}

// spawn starts the process with s's arguments.
func (s *Server) spawn() error {
	cmd := exec.Command(s.bin, s.args...)
	cmd.Dir = s.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:   true,            // Ctrl-C reaches lockbench, which stops servers in order
		Pdeathsig: syscall.SIGKILL, // if lockbench dies, so does the server
	}
	var out *os.File
	if s.outFile != "" {
		f, err := os.OpenFile(s.outFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("topology: %w", err)
		}
		out, cmd.Stdout, cmd.Stderr = f, f, f
	}
	if err := cmd.Start(); err != nil {
		if out != nil {
			out.Close()
		}
		return fmt.Errorf("topology: start %s: %w", filepath.Base(s.bin), err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		if out != nil {
			out.Close()
		}
		close(exited)
	}()
	s.mu.Lock()
	s.cmd, s.exited, s.Pid = cmd, exited, cmd.Process.Pid
	s.mu.Unlock()
	return nil
}

func (s *Server) current() (*exec.Cmd, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd, s.exited
}

// Kill ends the process at once (SIGKILL) and waits for it; the directory
// stays, so Restart can bring the server back. A fault, not a clean-up.
func (s *Server) Kill() {
	cmd, exited := s.current()
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
		<-exited
	}
}

// Restart kills the server if it runs, waits down, and starts it again on
// the same port with the same password and no data: with no persistence,
// it has forgotten every key. It waits until the server answers PING. A
// replica started with replicaof comes back as a replica of the same
// master.
func (s *Server) Restart(ctx context.Context, down time.Duration) error {
	s.Kill()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(down):
	}
	var err error
	for try := 0; try < 50; try++ { // the port can take a moment to free
		if err = s.spawn(); err != nil {
			return err
		}
		if err = s.waitReady(ctx, 5*time.Second); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("topology: restart %s: %w", s.Addr, err)
}

// Freeze stops the process (SIGSTOP) until Thaw.
func (s *Server) Freeze() {
	if cmd, _ := s.current(); cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Signal(syscall.SIGSTOP)
	}
}

// Thaw continues a frozen process (SIGCONT).
func (s *Server) Thaw() {
	if cmd, _ := s.current(); cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Signal(syscall.SIGCONT)
	}
}

// Stop ends the server (SIGTERM, SIGKILL after 3 s), waits for it to exit
// and removes its directory. Safe to call more than once.
func (s *Server) Stop() {
	s.once.Do(func() {
		s.Thaw() // a stopped process cannot handle SIGTERM
		cmd, exited := s.current()
		if cmd != nil && cmd.Process != nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(3 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		}
		os.RemoveAll(s.Dir)
		liveMu.Lock()
		delete(live, s)
		liveMu.Unlock()
	})
}

func (s *Server) kill() {
	cmd, exited := s.current()
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
		select {
		case <-exited:
		case <-time.After(time.Second):
		}
	}
	os.RemoveAll(s.Dir)
}

// Exited is closed when the current process has exited.
func (s *Server) Exited() <-chan struct{} {
	_, exited := s.current()
	return exited
}

func (s *Server) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last error
	_, exited := s.current()
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("process exited")
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if s.ready != nil {
			last = s.ready()
		} else {
			last = Ping(s.Addr, s.Password, 500*time.Millisecond)
		}
		if last == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	if s.ready != nil {
		return fmt.Errorf("not ready within %v: %v", limit, last)
	}
	return fmt.Errorf("no PONG within %v: %v", limit, last)
}

// Ping dials addr, authenticates when password is not empty, and expects
// PONG, all within timeout. It speaks RESP directly so that this package
// needs no client library.
func Ping(addr, password string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	req := "PING\r\n"
	if password != "" {
		req = resp("AUTH", password) + req
	}
	if _, err := c.Write([]byte(req)); err != nil {
		return err
	}
	r := bufio.NewReader(c)
	if password != "" {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if !strings.HasPrefix(line, "+OK") {
			return fmt.Errorf("AUTH: %s", strings.TrimSpace(line))
		}
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING: %s", strings.TrimSpace(line))
	}
	return nil
}

// Command sends one command (after AUTH when password is set) over RESP
// and returns a status, integer or bulk-string reply as text. Error replies
// become errors. It serves topology checks without a client library.
func Command(addr, password string, timeout time.Duration, args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	req := resp(args...)
	if password != "" {
		req = resp("AUTH", password) + req
	}
	if _, err := c.Write([]byte(req)); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	if password != "" {
		if _, err := readReply(r); err != nil {
			return "", fmt.Errorf("AUTH: %w", err)
		}
	}
	return readReply(r)
}

func readReply(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", errors.New(line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return "", fmt.Errorf("unsupported reply %q", line)
}

func resp(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // never fails on Linux
	}
	return hex.EncodeToString(b)
}

func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, "\n")
}

// redisServer finds the redis-server binary (ErrNoRedisServer if it is
// not on PATH) and first removes the directories killed runs left behind.
func redisServer() (string, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", ErrNoRedisServer
	}
	SweepStale()
	return bin, nil
}

// SweepStale removes the directories of servers whose lockbench process is
// gone (it was killed with SIGKILL, which ends the server but cannot remove
// the directory).
func SweepStale() {
	var dirs []string
	for _, kind := range []string{"redis", "mariadb", "zookeeper", "etcd"} {
		d, _ := filepath.Glob(filepath.Join(os.TempDir(), "lockbench-"+kind+"-*"))
		dirs = append(dirs, d...)
	}
	shm, _ := filepath.Glob("/dev/shm/lockbench-etcd-*") // StartEtcd's, on tmpfs
	dirs = append(dirs, shm...)
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid != os.Getpid() && !Alive(pid) {
			os.RemoveAll(d)
		}
	}
}

// Alive reports whether a process with this pid exists (and is not a
// zombie). Tests use it to check that no server outlives its run.
func Alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name; Z is a zombie.
	st := string(b)
	i := strings.LastIndexByte(st, ')')
	f := strings.Fields(st[i+1:])
	return i > 0 && len(f) > 0 && f[0] != "Z"
}
