// Package drivers is the one seam between lockbench and Redis client
// libraries. Strategies and workloads speak only to the small Driver
// interface defined here; each client library lives in its own adapter
// package (drivers/goredis for github.com/redis/go-redis/v9, drivers/rueidis
// for github.com/redis/rueidis) that registers itself by name in init(), the
// way database/sql drivers do. No package outside drivers/ imports a client
// library.
//
// drivertest holds the conformance suite that every adapter passes against a
// real redis-server.
package drivers
