// Package baselines registers the strategies whose lock or data lives
// outside Redis — sql-rowlock and sql-guard (MariaDB), zk (ZooKeeper) and
// etcd — for comparison with the Redis strategies on the same workloads and
// oracle. Import it for its side effect.
package baselines

import (
	// Register the baseline strategies.
	_ "github.com/lockbench/lockbench/strategies/etcdlock"
	_ "github.com/lockbench/lockbench/strategies/sqllock"
	_ "github.com/lockbench/lockbench/strategies/zklock"
)
