// Package redisadmin holds the administrative Redis calls lockbench makes
// around a scenario, outside its measured operations: the server version,
// deleting a run's keys, counting keys, finding lock keys left without a
// TTL, and reading the servers' command counts, CPU time and command rate
// (INFO). Each works through a drivers.Driver; for a cluster client it
// visits every master (drivers.NodeLister).
package redisadmin
