package topology

// Servers of the baseline strategies: MariaDB (MySQL protocol), ZooKeeper
// and etcd, each started like redis-server: a free 127.0.0.1 port, a
// temporary directory of its own (owner.pid for the stale-directory sweep),
// the parent-death signal, Stop on every exit path (KillAll included).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Errors for a missing server binary: each names the Debian package.
var (
	ErrNoMariaDB   = errors.New("mariadbd or mariadb-install-db not found: install Debian's mariadb-server package (apt-get install mariadb-server; `make test` and `make run` do it as root)")
	ErrNoZooKeeper = errors.New("ZooKeeper not found (java and /usr/share/java/zookeeper.jar): install Debian's zookeeper package (apt-get install zookeeper; `make test` and `make run` do it as root)")
	ErrNoEtcd      = errors.New("etcd not found on PATH: install Debian's etcd-server package (apt-get install etcd-server; `make test` and `make run` do it as root)")
)

// MySQLUser and MySQLDatabase are the account and database StartMariaDB
// creates; the password is random per server (Server.Password).
const (
	MySQLUser     = "lockbench"
	MySQLDatabase = "lockbench"
)

// MySQLDSN is the github.com/go-sql-driver/mysql DSN of a server started by
// StartMariaDB: user lockbench, its password, database lockbench.
func (s *Server) MySQLDSN() string {
	return MySQLUser + ":" + s.Password + "@tcp(" + s.Addr + ")/" + MySQLDatabase
}

// EtcdEndpoint is the client URL of a server started by StartEtcd.
func (s *Server) EtcdEndpoint() string { return "http://" + s.Addr }

// EtcdUser is the user a client of StartEtcd's server logs in as (etcd's
// root, with Server.Password); ZooKeeperUser is the digest user of
// StartZooKeeper's server (with Server.Password).
const (
	EtcdUser      = "root"
	ZooKeeperUser = "lockbench"
)

// ZooKeeperAuth is the digest credential, user:password, for lockbench's
// znodes on a server started by StartZooKeeper.
func (s *Server) ZooKeeperAuth() string { return ZooKeeperUser + ":" + s.Password }

// lookBin finds name on PATH, or in /usr/sbin (not on every PATH).
func lookBin(name string) (string, bool) {
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	p := filepath.Join("/usr/sbin", name)
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
		return p, true
	}
	return "", false
}

// HaveMariaDB, HaveZooKeeper and HaveEtcd report whether the server binary
// is installed (tests skip when it is not).
func HaveMariaDB() bool {
	_, a := lookBin("mariadbd")
	_, b := lookBin("mariadb-install-db")
	return a && b
}

// HaveZooKeeper: see HaveMariaDB.
func HaveZooKeeper() bool {
	_, err := zooKeeperCmd()
	return err == nil
}

// HaveEtcd: see HaveMariaDB.
func HaveEtcd() bool {
	_, ok := lookBin("etcd")
	return ok
}

// zookeeperJar is Debian's ZooKeeper server jar; its manifest's Class-Path
// names the libraries it needs.
const zookeeperJar = "/usr/share/java/zookeeper.jar"

func zooKeeperCmd() (string, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return "", ErrNoZooKeeper
	}
	if _, err := os.Stat(zookeeperJar); err != nil {
		return "", ErrNoZooKeeper
	}
	return java, nil
}

// newDir makes the server's temporary directory lockbench-<kind>-* with
// owner.pid, in base ("" = the system's temporary directory).
func newDir(base, kind string) (string, error) {
	dir, err := os.MkdirTemp(base, "lockbench-"+kind+"-")
	if err != nil {
		return "", fmt.Errorf("topology: temp dir: %w", err)
	}
	_ = os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644)
	return dir, nil
}

// startService spawns s, registers it for KillAll and waits until s.ready
// passes (at most limit); on failure it stops s and returns the log tail.
func startService(ctx context.Context, s *Server, name string, limit time.Duration) (*Server, error) {
	s.exited = make(chan struct{})
	if err := s.spawn(); err != nil {
		os.RemoveAll(s.Dir)
		return nil, err
	}
	liveMu.Lock()
	live[s] = struct{}{}
	liveMu.Unlock()
	if err := s.waitReady(ctx, limit); err != nil {
		tail := logTail(s.logFile)
		s.Stop()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if tail != "" {
			return nil, fmt.Errorf("topology: %s on %s did not start: %w; its log ends:\n%s", name, s.Addr, err, tail)
		}
		return nil, fmt.Errorf("topology: %s on %s did not start: %w", name, s.Addr, err)
	}
	return s, nil
}

// retryPorts runs start up to 3 times: a free port can be taken between
// the probe and the server's bind.
func retryPorts(ctx context.Context, start func() (*Server, error)) (*Server, error) {
	var last error
	for try := 0; try < 3; try++ {
		s, err := start()
		if err == nil {
			return s, nil
		}
		last = err
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return nil, last
}

// StartMariaDB initialises a data directory with mariadb-install-db and
// starts mariadbd on a free 127.0.0.1 port (no unix socket outside its
// directory, no binary log, no name resolution, a 64 MB buffer pool, and
// innodb_flush_log_at_trx_commit=2: the log is written at each commit but
// synced once a second, as Redis without persistence keeps nothing on
// disk). root is reachable only through the unix socket in the server's
// private directory (unix_socket authentication, as the system user
// root; no password, so none works over TCP); there is no anonymous
// account and no root but root@localhost. An init file creates database
// lockbench and user lockbench with a random password (Server.Password)
// for 127.0.0.1 only, with rights on that database only. It waits (at most 60 s) for the
// server's handshake. Errors: ErrNoMariaDB, a start failure with the log
// tail, or ctx's error.
func StartMariaDB(ctx context.Context) (*Server, error) {
	bin, ok := lookBin("mariadbd")
	install, ok2 := lookBin("mariadb-install-db")
	if !ok || !ok2 {
		return nil, ErrNoMariaDB
	}
	SweepStale()
	return retryPorts(ctx, func() (*Server, error) { return startMariaDB(ctx, bin, install) })
}

func startMariaDB(ctx context.Context, bin, install string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("topology: find a free port: %w", err)
	}
	dir, err := newDir("", "mariadb")
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	var asRoot []string
	if os.Geteuid() == 0 {
		asRoot = []string{"--user=root"} // mariadbd refuses to run as root without it
	}
	ictx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	icmd := exec.CommandContext(ictx, install, append([]string{"--no-defaults", "--datadir=" + data,
		"--auth-root-authentication-method=socket", "--skip-test-db"}, asRoot...)...)
	icmd.Dir = dir
	icmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if out, err := icmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("topology: mariadb-install-db: %w\n%s", err, tailOf(string(out)))
	}
	pw := randomHex(16)
	// root (and the account of the system user running lockbench, which
	// mariadb-install-db adds) log in only through the unix socket, in the
	// private directory, as that system user (unix_socket); no account
	// but lockbench's has a password, no anonymous account or other root
	// is left, and lockbench's own reaches only its database, from
	// 127.0.0.1.
	init := fmt.Sprintf("DELETE FROM mysql.global_priv WHERE User = '' OR (User = 'root' AND Host <> 'localhost');\nFLUSH PRIVILEGES;\n"+
		"CREATE DATABASE IF NOT EXISTS %s;\nCREATE USER '%s'@'127.0.0.1' IDENTIFIED BY '%s';\nGRANT ALL ON %s.* TO '%s'@'127.0.0.1';\n",
		MySQLDatabase, MySQLUser, pw, MySQLDatabase, MySQLUser)
	initFile := filepath.Join(dir, "init.sql")
	if err := os.WriteFile(initFile, []byte(init), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("topology: %w", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s := &Server{
		Addr: addr, Password: pw, Dir: dir, bin: bin,
		logFile: filepath.Join(dir, "error.log"),
		outFile: filepath.Join(dir, "error.log"),
		args: append([]string{"--no-defaults",
			"--datadir=" + data,
			"--port=" + strconv.Itoa(port),
			"--bind-address=127.0.0.1",
			"--socket=" + filepath.Join(dir, "mysqld.sock"),
			"--pid-file=" + filepath.Join(dir, "mysqld.pid"),
			"--log-error=" + filepath.Join(dir, "error.log"),
			"--init-file=" + initFile,
			"--skip-name-resolve",
			"--skip-log-bin",
			"--performance-schema=OFF",
			"--innodb-buffer-pool-size=64M",
			"--innodb-flush-log-at-trx-commit=2",
			"--max-connections=20100",
		}, asRoot...),
		ready: func() error { return mysqlGreeting(addr, time.Second) },
	}
	return startService(ctx, s, "mariadbd", 60*time.Second)
}

// mysqlGreeting dials addr and reads the server's handshake packet
// (protocol 10): the server accepts connections, so the init file has run.
func mysqlGreeting(addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	var hdr [5]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return err
	}
	if hdr[4] != 10 {
		return fmt.Errorf("unexpected MySQL handshake (first byte %d)", hdr[4])
	}
	return nil
}

// StartZooKeeper starts a standalone ZooKeeper (Debian's zookeeper.jar,
// ZooKeeperServerMain, at most 256 MB of heap) on a free 127.0.0.1 port
// with a generated zoo.cfg (tickTime 500 ms: sessions of 1 s to 10 s; no
// connection limit; no admin server, so no port but the client port; the
// four-letter words ruok, srvr and mntr only) and a temporary dataDir, and
// waits (at most 60 s) until it answers imok. The client port binds
// 127.0.0.1 (clientPortAddress). ZooKeeper has no server-wide password:
// Server.Password is a random digest password for user ZooKeeperUser
// (ZooKeeperAuth), and the zk strategy, given it, creates lockbench's
// znodes (its root, /lockbench, included) with a digest ACL for that
// identity only. Before it returns, the root znode "/", /zookeeper and
// /zookeeper/quota get the ACL ZooKeeperRootACL (that identity only,
// instead of ZooKeeper's world:anyone:cdrwa): nobody else can create,
// delete or change ACLs there; a server where someone created a znode or
// changed one of those ACLs first is stopped and refused. Errors: ErrNoZooKeeper, a start failure with the log
// tail, or ctx's error.
func StartZooKeeper(ctx context.Context) (*Server, error) {
	java, err := zooKeeperCmd()
	if err != nil {
		return nil, err
	}
	SweepStale()
	return retryPorts(ctx, func() (*Server, error) {
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("topology: find a free port: %w", err)
		}
		dir, err := newDir("", "zookeeper")
		if err != nil {
			return nil, err
		}
		cfg := fmt.Sprintf("tickTime=500\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nmaxClientCnxns=0\n"+
			"4lw.commands.whitelist=ruok,srvr,mntr\nadmin.enableServer=false\nforceSync=no\n", filepath.Join(dir, "data"), port)
		cfgFile := filepath.Join(dir, "zoo.cfg")
		if err := os.WriteFile(cfgFile, []byte(cfg), 0o644); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("topology: %w", err)
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		s := &Server{
			Addr: addr, Password: randomHex(16), Dir: dir, bin: java,
			logFile: filepath.Join(dir, "zookeeper.log"),
			outFile: filepath.Join(dir, "zookeeper.log"),
			args: []string{"-Xmx256m", "-XX:+UseSerialGC", "-Dzookeeper.admin.enableServer=false",
				"-cp", zookeeperJar, "org.apache.zookeeper.server.ZooKeeperServerMain", cfgFile},
			ready: func() error { return fourLetter(addr, "ruok", "imok", time.Second) },
		}
		s, err = startService(ctx, s, "ZooKeeper", 60*time.Second)
		if err != nil {
			return nil, err
		}
		if err := lockZooKeeperRoot(ctx, addr, s.ZooKeeperAuth(), 30*time.Second); err != nil {
			s.Stop()
			return nil, err
		}
		return s, nil
	})
}

// fourLetter sends a ZooKeeper four-letter word and expects want.
func fourLetter(addr, word, want string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte(word)); err != nil {
		return err
	}
	b, err := io.ReadAll(bufio.NewReader(c))
	if err != nil {
		return err
	}
	if !strings.Contains(string(b), want) {
		return fmt.Errorf("%s: got %q", word, b)
	}
	return nil
}

// StartEtcd starts a one-member etcd cluster on two free 127.0.0.1 ports
// (clients, peers) with a temporary data directory, and waits (at most
// 30 s) until GET /health reports true. The directory is in /dev/shm when
// there is one: etcd 3.4 syncs its log on every write and has no switch
// to skip it, and on a memory file system that costs nothing, as the
// other servers here skip their syncs (Redis: no persistence; MariaDB:
// flush at commit 2; ZooKeeper: forceSync=no). Both URLs bind 127.0.0.1.
// Once healthy, authentication is enabled through the v3 API (user root
// with a random password, Server.Password, and role root; auth enable):
// from then on every key-value, lease and watch request needs a token
// from that user's password (EtcdUser). Errors: ErrNoEtcd, a start
// failure with the log tail, or ctx's error.
func StartEtcd(ctx context.Context) (*Server, error) {
	bin, ok := lookBin("etcd")
	if !ok {
		return nil, ErrNoEtcd
	}
	SweepStale()
	return retryPorts(ctx, func() (*Server, error) {
		port, err1 := freePort()
		peer, err2 := freePort()
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("topology: find a free port: %w", err)
		}
		if peer == port {
			return nil, errors.New("topology: the same free port twice")
		}
		dir, err := newDir(shmDir(), "etcd")
		if err != nil {
			return nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		peerURL := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(peer))
		s := &Server{
			Addr: addr, Dir: dir, bin: bin,
			logFile: filepath.Join(dir, "etcd.log"),
			outFile: filepath.Join(dir, "etcd.log"),
			args: []string{"--name", "lockbench", "--data-dir", filepath.Join(dir, "data"),
				"--listen-client-urls", "http://" + addr, "--advertise-client-urls", "http://" + addr,
				"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
				"--initial-cluster", "lockbench=" + peerURL, "--initial-cluster-state", "new",
				"--logger", "zap", "--log-outputs", "stderr", "--log-level", "warn",
				// Simple tokens live while used; an hour idle is more
				// than any pause of a run.
				"--auth-token", "simple", "--auth-token-ttl", "3600"},
			ready: func() error { return etcdHealth(addr, time.Second) },
		}
		if _, err := startService(ctx, s, "etcd", 30*time.Second); err != nil {
			return nil, err
		}
		pw := randomHex(16)
		if err := etcdEnableAuth(ctx, addr, pw); err != nil {
			s.Stop()
			return nil, fmt.Errorf("topology: etcd on %s: enable authentication: %w", addr, err)
		}
		s.Password = pw
		return s, nil
	})
}

// etcdEnableAuth adds user root with password pw and role root, grants
// the role, and enables authentication, through etcd's v3 JSON gateway.
func etcdEnableAuth(ctx context.Context, addr, pw string) error {
	for _, c := range []struct{ path, body string }{
		{"/v3/auth/user/add", fmt.Sprintf(`{"name":%q,"password":%q}`, EtcdUser, pw)},
		{"/v3/auth/role/add", `{"name":"root"}`},
		{"/v3/auth/user/grant", fmt.Sprintf(`{"user":%q,"role":"root"}`, EtcdUser)},
		{"/v3/auth/enable", `{}`},
	} {
		if _, err := etcdPost(ctx, addr, "", c.path, c.body); err != nil {
			return fmt.Errorf("%s: %w", c.path, err)
		}
	}
	return nil
}

// etcdPost posts body to etcd's JSON gateway at path, with token as the
// Authorization header when not empty, and returns the reply; a status
// other than 200 is an error carrying the reply.
func etcdPost(ctx context.Context, addr, token, path, body string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	resp, err := healthClient().Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return string(b), nil
}

var healthClient = sync.OnceValue(func() *http.Client { return &http.Client{} })

// etcdHealth expects {"health":"true"} from GET /health.
func etcdHealth(addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := healthClient().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	if !strings.Contains(string(b), `"health":"true"`) {
		return fmt.Errorf("etcd /health: %s", b)
	}
	return nil
}

// shmDir is /dev/shm when it is a writable directory, else "".
func shmDir() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if f, err := os.CreateTemp("/dev/shm", ".lockbench-check-*"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return "/dev/shm"
		}
	}
	return ""
}

func tailOf(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, "\n")
}
