package sqllock_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/lockbench/lockbench/internal/topology"
)

// login opens one connection as user with password over TCP and pings.
func login(addr, user, password string) error {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = user, password, "tcp", addr
	cfg.Timeout = 5 * time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// The MariaDB lockbench starts refuses root over TCP (with no password or
// with lockbench's), lockbench's user without its password or with a
// wrong one, and an anonymous login; lockbench's user with its password
// gets in and sees only its database. The server binds 127.0.0.1 only
// and its directory (the unix socket's) is private. It fails, not skips,
// when MariaDB is installed but does not start.
func TestMariaDBRefusesUnauthenticated(t *testing.T) {
	if !topology.HaveMariaDB() {
		t.Skip("MariaDB is not installed: apt-get install mariadb-server (make test does it as root)")
	}
	s, err := topology.StartMariaDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	accessDenied := func(what string, err error) {
		t.Helper()
		var me *mysql.MySQLError
		// 1045: no such account or a wrong password; 1698: an account
		// that authenticates by unix_socket only, over TCP.
		if !errors.As(err, &me) || (me.Number != 1045 && me.Number != 1698) {
			t.Errorf("%s: %v, want access denied (1045 or 1698)", what, err)
		}
	}
	accessDenied("root over TCP, no password", login(s.Addr, "root", ""))
	accessDenied("root over TCP, lockbench's password", login(s.Addr, "root", s.Password))
	accessDenied("lockbench, no password", login(s.Addr, topology.MySQLUser, ""))
	accessDenied("lockbench, a wrong password", login(s.Addr, topology.MySQLUser, "x"+s.Password))
	accessDenied("anonymous", login(s.Addr, "", ""))
	accessDenied("mysql (install-db's), no password", login(s.Addr, "mysql", ""))
	if len(s.Password) != 32 {
		t.Errorf("password %q, want 32 random hex characters", s.Password)
	}

	// The DSN lockbench uses works, and reaches lockbench's database only.
	cfg, err := mysql.ParseDSN(s.MySQLDSN())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE IF NOT EXISTS authcheck (id INT PRIMARY KEY)"); err != nil {
		t.Fatalf("lockbench's DSN: %v", err)
	}
	rows, err := db.Query("SHOW DATABASES")
	if err != nil {
		t.Fatal(err)
	}
	var dbs []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		dbs = append(dbs, name)
	}
	rows.Close()
	for _, d := range dbs {
		if d != topology.MySQLDatabase && d != "information_schema" {
			t.Errorf("lockbench's user sees database %q (all: %v)", d, dbs)
		}
	}
	// lockbench's user cannot read the accounts table.
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM mysql.global_priv").Scan(&n); err == nil {
		t.Errorf("lockbench's user reads mysql.global_priv (%d rows)", n)
	}

	if fi, err := os.Stat(s.Dir); err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("server directory %s: mode %v, %v; want private (no group or other access)", s.Dir, fi.Mode(), err)
	}
	sock := filepath.Join(s.Dir, "mysqld.sock")
	if _, err := os.Stat(sock); err != nil {
		t.Errorf("unix socket %s: %v", sock, err)
	}
	loopbackOnly(t, s.Addr)
}

// loopbackOnly checks that addr's port is not reachable on this host's
// other addresses.
func loopbackOnly(t *testing.T, addr string) {
	t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range ifaddrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && !ipn.IP.IsLinkLocalUnicast() {
			other := net.JoinHostPort(ipn.IP.String(), port)
			if c, err := net.DialTimeout("tcp", other, 300*time.Millisecond); err == nil {
				c.Close()
				t.Errorf("%s also listens on %s: want 127.0.0.1 only", addr, other)
			} else if !strings.Contains(err.Error(), "refused") && !strings.Contains(err.Error(), "timeout") {
				t.Logf("%s: %v", other, err)
			}
		}
	}
}
