// Package sqllock holds the SQL baselines: `sql-rowlock`, a row lock
// (SELECT ... FOR UPDATE in a transaction, then UPDATE, then COMMIT) and
// `sql-guard`, no lock but a guarded UPDATE ... SET n = n - 1 WHERE k = ?
// AND n >= 1. The workload's data lives in a table of their MariaDB or
// MySQL server (MySQL protocol, github.com/go-sql-driver/mysql), one row
// per item; the InnoDB row lock is the lock. Import the package for its
// side effect (strategies/baselines does).
//
// No token is stored in Redis (the row lock lives in the database's
// transaction; sql-guard takes none), so neither calls Config.Tokens and
// lockbench's liveness oracle (which reads Redis lock keys) does not
// measure them.
package sqllock

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/lockbench/lockbench/strategies"
)

var workloads = []string{"flash-sale", "hot-key"}

func init() {
	strategies.Register("sql-rowlock", strategies.Info{
		Desc:    "SQL row lock: BEGIN; SELECT ... FOR UPDATE on the item's row; work; UPDATE; COMMIT (MariaDB via the MySQL protocol; the stock lives in the database)",
		Backend: strategies.MariaDB, Workloads: workloads,
	}, func(c strategies.Config) (*rowLocker, error) {
		s, err := open(c)
		if err != nil {
			return nil, err
		}
		return &rowLocker{Store: s}, nil
	})
	strategies.Register("sql-guard", strategies.Info{
		Desc:    "no lock: read, work, then UPDATE ... SET n = n - 1 WHERE k = ? AND n >= 1 (hot-key: n = n + 1) on the item's row (MariaDB; the stock lives in the database)",
		Backend: strategies.MariaDB, Workloads: workloads, Guard: "decr",
	}, func(c strategies.Config) (*guard, error) {
		s, err := open(c)
		if err != nil {
			return nil, err
		}
		return &guard{Store: s}, nil
	})
}

// Store is the SQL data of one scenario: a pool and the scenario's table.
// It implements strategies.RowStore; rowLocker and guard embed it.
type Store struct {
	db    *sql.DB
	table string // quoted identifier, set by CreateRows
	keys  []string
	mu    sync.Mutex
}

// open connects to c.Backends.MySQL with a pool of c.Clients + 4
// connections and checks it answers within 5 s.
func open(c strategies.Config) (*Store, error) {
	cfg, err := mysql.ParseDSN(c.Backends.MySQL)
	if err != nil {
		return nil, fmt.Errorf("sql: bad DSN: %w", err)
	}
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 5*time.Second, 30*time.Second, 30*time.Second
	cfg.InterpolateParams = true // one round trip per statement, as a Redis command
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("sql: %w", err)
	}
	db := sql.OpenDB(conn)
	n := max(c.Clients, 1) + 4
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("cannot reach MariaDB at %s: %w", cfg.Addr, err)
	}
	return &Store{db: db}, nil
}

var _ strategies.RowStore = (*Store)(nil)

// TableName turns a scenario prefix ("lockbench:<run>:<n>:") into a table
// name: "lb_" and the prefix's letters and digits, "_" for the rest, at
// most 64 characters (MySQL's limit).
func TableName(prefix string) string {
	var b strings.Builder
	b.WriteString("lb_")
	for _, r := range strings.TrimPrefix(prefix, "lockbench:") {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := strings.TrimRight(b.String(), "_")
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

// CreateRows creates table TableName(prefix) (InnoDB; k the primary key)
// and inserts the rows in batches of 500. It refuses a table that exists:
// lockbench drops only tables it created.
func (s *Store) CreateRows(ctx context.Context, prefix string, keys []string, values []int64) error {
	if len(keys) != len(values) {
		return errors.New("sql: keys and values differ in length")
	}
	name := "`" + TableName(prefix) + "`"
	if _, err := s.db.ExecContext(ctx, "CREATE TABLE "+name+
		" (k VARCHAR(191) NOT NULL PRIMARY KEY, n BIGINT NOT NULL, sold BIGINT NOT NULL DEFAULT 0) ENGINE=InnoDB"); err != nil {
		return fmt.Errorf("sql: create table %s: %w", name, err)
	}
	s.mu.Lock()
	s.table, s.keys = name, keys
	s.mu.Unlock()
	for lo := 0; lo < len(keys); lo += 500 {
		hi := min(lo+500, len(keys))
		q := "INSERT INTO " + name + " (k, n) VALUES " + strings.TrimSuffix(strings.Repeat("(?, ?),", hi-lo), ",")
		args := make([]any, 0, 2*(hi-lo))
		for i := lo; i < hi; i++ {
			args = append(args, keys[i], values[i])
		}
		if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("sql: insert rows: %w", err)
		}
	}
	return nil
}

// ReadRow is SELECT n FROM t WHERE k = ? (InnoDB's consistent read: no lock).
func (s *Store) ReadRow(ctx context.Context, key string) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, "SELECT n FROM "+s.table+" WHERE k = ?", key).Scan(&n)
	return n, err
}

// Decrement is UPDATE t SET n = n - 1, sold = sold + 1 WHERE k = ? AND n >= 1.
func (s *Store) Decrement(ctx context.Context, key string) (bool, error) {
	r, err := s.db.ExecContext(ctx, "UPDATE "+s.table+" SET n = n - 1, sold = sold + 1 WHERE k = ? AND n >= 1", key)
	if err != nil {
		return false, err
	}
	n, err := r.RowsAffected()
	return n == 1, err
}

// Increment is UPDATE t SET n = n + 1 WHERE k = ?.
func (s *Store) Increment(ctx context.Context, key string) error {
	_, err := s.db.ExecContext(ctx, "UPDATE "+s.table+" SET n = n + 1 WHERE k = ?", key)
	return err
}

// Rows reads every row (SELECT k, n, sold) and orders them as the keys.
func (s *Store) Rows(ctx context.Context) (n, sold []int64, err error) {
	rows, err := s.db.QueryContext(ctx, "SELECT k, n, sold FROM "+s.table)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	got := make(map[string][2]int64, len(s.keys))
	for rows.Next() {
		var k string
		var v [2]int64
		if err := rows.Scan(&k, &v[0], &v[1]); err != nil {
			return nil, nil, err
		}
		got[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	n, sold = make([]int64, len(s.keys)), make([]int64, len(s.keys))
	for i, k := range s.keys {
		v, ok := got[k]
		if !ok {
			return nil, nil, fmt.Errorf("sql: row %q is missing", k)
		}
		n[i], sold[i] = v[0], v[1]
	}
	return n, sold, nil
}

// DropRows drops the table CreateRows made.
func (s *Store) DropRows(ctx context.Context) error {
	s.mu.Lock()
	t := s.table
	s.table = ""
	s.mu.Unlock()
	if t == "" {
		return nil
	}
	_, err := s.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+t)
	return err
}

// Close closes the pool.
func (s *Store) Close() error { return s.db.Close() }

// guard is sql-guard: no lock, the workload's write is Decrement.
type guard struct{ *Store }

var (
	_ strategies.Locker   = (*guard)(nil)
	_ strategies.Lockless = (*guard)(nil)
)

func (*guard) Lockless() {}

// TryAcquire grants a lease that guards nothing: flash-sale and hot-key,
// the workloads sql-guard runs, never call it.
func (*guard) TryAcquire(_ context.Context, key string) (strategies.Lease, error) {
	return nopLease(key), nil
}

type nopLease string

func (l nopLease) Key() string                   { return string(l) }
func (l nopLease) Token() string                 { return "" }
func (l nopLease) Release(context.Context) error { return nil }

// rowLocker is sql-rowlock: the lock on key is the InnoDB row lock taken by
// SELECT n FROM t WHERE k = key FOR UPDATE in a transaction; the lease
// holds the transaction and Release commits it. A waiter queues inside
// InnoDB (bounded by ctx and innodb_lock_wait_timeout), so the locker is
// strategies.Queued.
type rowLocker struct{ *Store }

var (
	_ strategies.Locker   = (*rowLocker)(nil)
	_ strategies.Queued   = (*rowLocker)(nil)
	_ strategies.RowLease = (*rowLease)(nil)
)

func (*rowLocker) Queued() {}

func (r *rowLocker) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	// The transaction outlives ctx (Acquire's deadline ends when it returns;
	// database/sql would roll back a transaction whose context ended): only
	// the wait for the row lock is bounded by ctx.
	tx, err := r.db.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		return nil, err
	}
	var n int64
	if err := tx.QueryRowContext(ctx, "SELECT n FROM "+r.table+" WHERE k = ? FOR UPDATE", key).Scan(&n); err != nil {
		_ = tx.Rollback()
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("sql-rowlock: no row %q (the workload creates its rows in Setup)", key)
		}
		return nil, err
	}
	return &rowLease{key: key, token: strategies.NewToken(), tx: tx, n: n, table: r.table}, nil
}

type rowLease struct {
	key, token, table string
	tx                *sql.Tx
	n                 int64
}

func (l *rowLease) Key() string   { return l.key }
func (l *rowLease) Token() string { return l.token }
func (l *rowLease) Value() int64  { return l.n }

func (l *rowLease) WriteRow(ctx context.Context, n, soldDelta int64) error {
	_, err := l.tx.ExecContext(ctx, "UPDATE "+l.table+" SET n = ?, sold = sold + ? WHERE k = ?", n, soldDelta, l.key)
	return err
}

// Release commits the transaction, which releases the row lock.
func (l *rowLease) Release(context.Context) error { return l.tx.Commit() }
