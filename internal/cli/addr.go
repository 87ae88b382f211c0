package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/strategies"
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
// or a server that does not speak TLS on that port.
func tlsHint(err error, usingTLS bool) error {
	if err == nil || !usingTLS {
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
	return err
}

// external returns the nodes a scenario of layout kind uses on the
// user's servers: one Cluster client seeded with every address
// (--cluster), one client of the master the Sentinels name
// (--sentinel-master), every address for independent masters, else the
// first address.
func (p *plan) external(kind strategies.Topology) []engine.Node {
	switch n := p.conn; {
	case n.Cluster:
		n.Addr, n.Seeds = p.addrs[0], p.addrs[1:]
		return []engine.Node{n}
	case n.MasterName != "":
		n.Addr = fmt.Sprintf("%s via Sentinel %s", n.MasterName, strings.Join(p.addrs, ","))
		n.Sentinels = p.addrs
		return []engine.Node{n}
	}
	var nodes []engine.Node
	for _, a := range p.addrs {
		n := p.conn
		n.Addr = a
		nodes = append(nodes, n)
	}
	if kind != strategies.Masters {
		nodes = nodes[:1]
	}
	return nodes
}

// externalName is the topology recorded for a run on the user's servers.
func (p *plan) externalName() string {
	switch {
	case p.conn.Cluster:
		return "external-cluster"
	case p.conn.MasterName != "":
		return "external-sentinel"
	}
	return "external"
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

// connFlags declares the flags that say how to reach the user's servers,
// shared by run and clean: --addr, the login, TLS, Cluster, Sentinel
// (parseConn reads them).
func connFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.StringVar(&f.addr, "addr", "", "use these Redis servers instead of starting redis-server: host:port[,...] or redis://[user:password@]host:port[/db] (rediss:// for TLS)")
	fl.StringVar(&f.password, "password", "", "password for --addr servers (visible in ps: prefer --password-file or $LOCKBENCH_PASSWORD)")
	fl.StringVar(&f.passwordFile, "password-file", "", "read the password for --addr servers from the first line of this file")
	fl.StringVar(&f.username, "username", "", "ACL user for --addr servers (AUTH username password; default: the default user)")
	fl.BoolVar(&f.tls, "tls", false, "connect to host:port --addr servers over TLS (rediss:// addresses imply it)")
	fl.StringVar(&f.tlsCA, "tls-ca-file", "", "TLS: PEM file of the CA(s) that signed the servers' certificates (default: the system's)")
	fl.StringVar(&f.tlsCert, "tls-cert-file", "", "TLS: client certificate (PEM), for servers with tls-auth-clients; with --tls-key-file")
	fl.StringVar(&f.tlsKey, "tls-key-file", "", "TLS: the client certificate's private key (PEM)")
	fl.StringVar(&f.tlsServerName, "tls-server-name", "", "TLS: the name the servers' certificates must carry (default: each address's host)")
	fl.BoolVar(&f.tlsInsecure, "tls-insecure-skip-verify", false, "TLS: accept any server certificate (test servers only: anyone in the middle can read and change the traffic)")
	fl.BoolVar(&f.cluster, "cluster", false, "the --addr servers are nodes of a Redis Cluster (seeds; the client finds the rest)")
	fl.StringVar(&f.sentinelMaster, "sentinel-master", "", "the --addr servers are Sentinels: run on the master they know as NAME, following failovers")
	fl.StringVar(&f.sentinelPassword, "sentinel-password", "", "with --sentinel-master: the Sentinels' own password (--password is the master's)")
	fl.StringVar(&f.sentinelPasswordFile, "sentinel-password-file", "", "with --sentinel-master: read the Sentinels' own password from the first line of this file")
}
