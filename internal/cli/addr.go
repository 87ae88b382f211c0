package cli

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

// addrURL is one --addr item: host:port, or what a redis:// or rediss://
// URL holds.
type addrURL struct {
	hostport       string
	url, tls       bool   // a URL; rediss://
	user, password string // from the URL's user info
	db             int    // the URL's path: /N
}

// parseAddr accepts host:port or a redis[s]://[[user]:password@]host:port[/db]
// URL (as go-redis's ParseURL and redis-cli -u read them: a user info with
// no colon is a username). Its errors never quote the input, which may
// hold a password.
func parseAddr(a string) (addrURL, error) {
	if !strings.Contains(a, "://") {
		return addrURL{hostport: a}, nil
	}
	const want = "want host:port or redis://[[user]:password@]host:port[/db] (rediss:// for TLS)"
	u, err := url.Parse(a)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" || u.Opaque != "" {
		return addrURL{}, errors.New(want)
	}
	out := addrURL{hostport: u.Host, url: true, tls: u.Scheme == "rediss"}
	if u.User != nil {
		out.user = u.User.Username()
		out.password, _ = u.User.Password()
	}
	if p := strings.TrimPrefix(u.Path, "/"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 1_000_000 || p[0] == '+' {
			return addrURL{}, errors.New("the path must be a database number (/0, /1, ...)")
		}
		out.db = n
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return addrURL{}, errors.New("query parameters are not read; use the flags (--tls-ca-file, --username, ...)")
	}
	if !strings.Contains(u.Host, ":") || strings.HasSuffix(u.Host, "]") {
		out.hostport = net.JoinHostPort(u.Hostname(), "6379") // the URL form's default port
	}
	return out, nil
}

// redact hides the user name and password of a redis:// or rediss:// URL
// (also of one that does not parse).
func redact(a string) string {
	if u, err := url.Parse(a); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			name := ""
			if u.User.Username() != "" {
				name = "xxxxx"
			}
			u.User = url.UserPassword(name, "xxxxx")
		} else {
			u.User = url.User("xxxxx")
		}
		return u.String()
	} else if err != nil {
		scheme, rest, ok := strings.Cut(a, "://")
		if at := strings.LastIndexByte(rest, '@'); ok && at >= 0 {
			return scheme + "://xxxxx@" + rest[at+1:]
		}
	}
	return a
}

// tlsConfig builds the TLS configuration of the --tls-* flags: the CA
// file's certificates as the trusted roots (default: the system's), the
// client certificate and key, the server name, and skip-verify. Errors name
// the file that could not be used (usage errors).
func tlsConfig(f *runFlags) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.tlsServerName, InsecureSkipVerify: f.tlsInsecure}
	var errs []error
	if f.tlsCA != "" {
		pem, err := os.ReadFile(f.tlsCA)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("--tls-ca-file: %w", err))
		default:
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				errs = append(errs, fmt.Errorf("--tls-ca-file %s holds no PEM certificate", f.tlsCA))
			}
			cfg.RootCAs = pool
		}
	}
	switch {
	case (f.tlsCert == "") != (f.tlsKey == ""):
		errs = append(errs, errors.New("--tls-cert-file and --tls-key-file go together (a client certificate and its key)"))
	case f.tlsCert != "":
		cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			errs = append(errs, fmt.Errorf("--tls-cert-file/--tls-key-file: %w", err))
		} else {
			cfg.Certificates = []tls.Certificate{cert}
		}
	}
	return cfg, errors.Join(errs...)
}

// tlsHint adds what to do to an error from a TLS handshake: a server
// certificate that did not verify, a client certificate the server wants,
// or a server that does not speak TLS on that port. When the error says
// none of these (a plain Redis waits for more of the TLS ClientHello, and
// the driver reports only a timeout), n's addresses are asked PING in
// plain text (plainRedis): one that answers makes the error a usage
// error (exit 2) saying that it does not speak TLS.
func tlsHint(err error, n drivers.Endpoint) error {
	if err == nil || n.TLS == nil {
		return err
	}
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	msg := err.Error()
	switch {
	case errors.As(err, &host) || strings.Contains(msg, "x509: certificate is valid for"):
		return fmt.Errorf("%w\n(the certificate names other hosts: connect by one of its names, or give the name with --tls-server-name)", err)
	case errors.As(err, &unknown) || strings.Contains(msg, "x509:"):
		return fmt.Errorf("%w\n(give the CA that signed the server's certificate with --tls-ca-file; --tls-insecure-skip-verify skips the check, for test servers only)", err)
	case strings.Contains(msg, "certificate required") || strings.Contains(msg, "bad certificate"):
		return fmt.Errorf("%w\n(the server wants a client certificate its CA signed: --tls-cert-file and --tls-key-file)", err)
	case strings.Contains(msg, "does not look like a TLS handshake"):
		return fmt.Errorf("%w\n(the server does not speak TLS on this port: use redis:// or drop --tls)", err)
	}
	for _, a := range append(append([]string{n.Addr}, n.Seeds...), n.Sentinels...) {
		if a != "" && plainRedis(a) {
			return usageError{fmt.Errorf("the server at %s does not speak TLS: it answers PING in plain text (drop --tls / use redis://); TLS connection: %w", a, err)}
		}
	}
	return err
}

// plainRedis reports whether a server at addr answers a plain-text PING
// as Redis does (+PONG, or an error such as -NOAUTH), within 2 s.
func plainRedis(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	b := make([]byte, 64)
	k, _ := io.ReadAtLeast(c, b, 3)
	return bytes.HasPrefix(b[:k], []byte("+PONG")) || bytes.HasPrefix(b[:k], []byte("-NOAUTH")) || bytes.HasPrefix(b[:k], []byte("-ERR"))
}

// redactArgs hides passwords in a command line: redis:// URLs and the
// value of --password.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case i > 0 && (args[i-1] == "--password" || args[i-1] == "--username" || args[i-1] == "--sentinel-password"):
			out[i] = "xxxxx"
		case strings.HasPrefix(a, "--password="), strings.HasPrefix(a, "--username="), strings.HasPrefix(a, "--sentinel-password="):
			k, _, _ := strings.Cut(a, "=")
			out[i] = k + "=xxxxx"
		default:
			parts := strings.Split(a, ",")
			for j, p := range parts {
				k, v, ok := strings.Cut(p, "=")
				if ok && strings.Contains(v, "://") {
					parts[j] = k + "=" + redact(v)
				} else {
					parts[j] = redact(p)
				}
			}
			out[i] = strings.Join(parts, ",")
		}
	}
	return out
}

// checkListenAddr checks a [host]:port to listen on: the port a number
// from 0 (any) to 65535. Whether it is free is known when listening.
func checkListenAddr(a string) error {
	_, port, err := net.SplitHostPort(a)
	if err != nil {
		return fmt.Errorf("want [host]:port, like :9091 or 127.0.0.1:9091")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 || port[0] == '+' {
		return fmt.Errorf("the port must be a number from 0 (any free port) to 65535")
	}
	return nil
}

// parseConn reads the connection flags run and clean share (connFlags):
// the --addr servers, the login (the flags', or the ones in the --addr
// URLs, else $LOCKBENCH_PASSWORD), the database, TLS, Cluster or
// Sentinel; every problem is returned (usage errors). It never changes f.
func parseConn(f *runFlags) ([]string, drivers.Endpoint, []error) {
	c := &connReader{f: f}
	// password and username: the flags', or the ones in the --addr URLs
	// (validate never changes f).
	c.password, c.username = f.password, f.username
	c.passwordFiles()
	if f.addr != "" || f.changed["addr"] { // --addr '' is refused, not "start servers"
		c.addrList()
	}
	if f.sentinelMaster != "" && strings.TrimSpace(f.sentinelMaster) != f.sentinelMaster {
		c.bad("--sentinel-master %q has leading or trailing spaces", f.sentinelMaster)
	}
	if c.password == "" {
		c.password = os.Getenv("LOCKBENCH_PASSWORD")
	}
	return c.addrs, drivers.Endpoint{Username: c.username, Password: c.password, DB: c.db, TLS: c.tls, Cluster: f.cluster,
		MasterName: f.sentinelMaster, SentinelPassword: c.sentinelPassword}, c.errs
}

// connReader is parseConn's state: what the connection flags give so far.
type connReader struct {
	f                  *runFlags
	errs               []error
	addrs              []string
	tls                *tls.Config
	db                 int
	password, username string
	sentinelPassword   string
	nTLS, nPlain       int // rediss:// and redis:// URLs in --addr
}

func (c *connReader) bad(format string, a ...any) { c.errs = append(c.errs, fmt.Errorf(format, a...)) }

// passwordFiles reads --password-file and --sentinel-password-file, each
// refused beside the flag that gives the same password.
func (c *connReader) passwordFiles() {
	f := c.f
	if f.passwordFile != "" {
		pw, err := readSecretFile(f.passwordFile)
		switch {
		case err != nil:
			c.bad("--password-file: %v", err)
		case f.password != "":
			c.bad("--password and --password-file both give the password; give one (--password-file keeps it out of ps)")
		default:
			c.password = pw
		}
	}
	c.sentinelPassword = f.sentinelPassword
	if f.sentinelPasswordFile != "" {
		pw, err := readSecretFile(f.sentinelPasswordFile)
		switch {
		case err != nil:
			c.bad("--sentinel-password-file: %v", err)
		case f.sentinelPassword != "":
			c.bad("--sentinel-password and --sentinel-password-file both give the Sentinels' password; give one")
		default:
			c.sentinelPassword = pw
		}
	}
}

// addrList reads the --addr list (addrItem each), then TLS and the
// Cluster and Sentinel flags that go with it.
func (c *connReader) addrList() {
	f := c.f
	items := splitList(f.addr)
	for _, raw := range items {
		c.addrItem(raw)
	}
	if len(items) == 0 {
		c.bad("--addr %q gives no server: give host:port or a redis:// URL, or drop --addr to let lockbench start its own servers", f.addr)
	}
	if c.nTLS > 0 && c.nPlain > 0 {
		c.bad("--addr mixes redis:// and rediss:// URLs; a run uses TLS on every server or on none")
	}
	if c.nTLS > 0 || f.tls {
		if c.nPlain > 0 && c.nTLS == 0 {
			c.bad("--tls with a redis:// URL: write rediss:// for TLS")
		}
		var err error
		if c.tls, err = tlsConfig(f); err != nil {
			c.errs = append(c.errs, err)
		}
	}
	if f.cluster && f.sentinelMaster != "" {
		c.bad("--cluster and --sentinel-master exclude each other: the --addr servers are Cluster nodes or Sentinels")
	}
	if f.cluster && c.db != 0 {
		c.bad("--addr selects database %d, but a Redis Cluster has only database 0", c.db)
	}
}

// addrItem reads one item of --addr: host:port or a redis:// or rediss://
// URL, whose login and database must agree with the others'.
func (c *connReader) addrItem(raw string) {
	u, err := parseAddr(raw)
	if err != nil {
		c.bad("--addr %q: %v", redact(raw), err)
		return
	}
	if u.url && u.tls {
		c.nTLS++
	} else if u.url {
		c.nPlain++
	}
	if u.password != "" {
		if c.password != "" && c.password != u.password {
			c.bad("--addr: two different passwords (in the URLs or --password)")
		}
		c.password = u.password
	}
	if u.user != "" {
		if c.username != "" && c.username != u.user {
			c.bad("--addr: two different usernames (in the URLs or --username)")
		}
		c.username = u.user
	}
	if u.db != 0 {
		if c.db != 0 && c.db != u.db {
			c.bad("--addr: two different database numbers (%d and %d)", c.db, u.db)
		}
		c.db = u.db
	}
	a := u.hostport
	host, port, err := net.SplitHostPort(a)
	n, perr := strconv.Atoi(port)
	switch {
	case err != nil:
		c.bad("--addr %q: want host:port ([::1]:6379 for IPv6): %v", a, err)
	case host == "":
		c.bad("--addr %q: the host is missing", a)
	case perr != nil || n < 1 || n > 65535 || port[0] == '+':
		c.bad("--addr %q: the port must be a number from 1 to 65535", a)
	default:
		c.addrs = append(c.addrs, net.JoinHostPort(host, port))
	}
}

// readSecretFile reads a password from the first line of path (the line
// break trimmed). A file that cannot be read or whose first line is empty
// is an error naming path.
func readSecretFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", fmt.Errorf("%s: %v", path, err)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) == 0 {
		return "", fmt.Errorf("%s: the first line is empty; write the password on it", path)
	}
	return string(line), nil
}
