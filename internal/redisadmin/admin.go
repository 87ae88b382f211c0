package redisadmin

import (
	"context"
	"errors"
	"strings"

	"github.com/lockbench/lockbench/drivers"
)

// ServerVersion returns redis_version from INFO server.
func ServerVersion(ctx context.Context, d drivers.Driver) (string, error) {
	r, err := d.Do(ctx, "INFO", "server")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(r.Str, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v, nil
		}
	}
	return "", errors.New("INFO server has no redis_version")
}

// DeleteKeys deletes every key matching prefix* on d (SCAN, then DEL in
// batches; on a cluster client, on every master) and returns how many it
// deleted. It touches no other key.
func DeleteKeys(ctx context.Context, d drivers.Driver, prefix string) (int, error) {
	if prefix == "" {
		return 0, errors.New("redisadmin: refusing to delete keys with an empty prefix")
	}
	nodes, cluster, err := perNode(ctx, d)
	if err != nil {
		return 0, err
	}
	deleted := 0
	for _, n := range nodes {
		cursor := "0"
		for {
			r, err := n.Do(ctx, "SCAN", cursor, "MATCH", prefix+"*", "COUNT", "1000")
			if err != nil {
				return deleted, err
			}
			if len(r.Array) != 2 {
				return deleted, errors.New("redisadmin: malformed SCAN reply")
			}
			cursor = r.Array[0].Str
			keys := r.Array[1].Array
			// DEL's reply counts the keys it deleted: a key SCAN returns
			// twice, or one that expired in between, counts once or not.
			if cluster { // keys of one node may lie in many slots
				for _, k := range keys {
					r, err := n.Do(ctx, "DEL", k.Str)
					if err != nil {
						return deleted, err
					}
					deleted += int(r.Int)
				}
			} else if len(keys) > 0 {
				args := make([]string, 0, len(keys)+1)
				args = append(args, "DEL")
				for _, k := range keys {
					args = append(args, k.Str)
				}
				r, err := n.Do(ctx, args...)
				if err != nil {
					return deleted, err
				}
				deleted += int(r.Int)
			}
			if cursor == "0" {
				break
			}
		}
	}
	return deleted, nil
}

// CountKeys returns how many keys match prefix* on d (SCAN, summed over
// the masters of a cluster client; a key SCAN returns twice may count
// twice). It changes nothing.
func CountKeys(ctx context.Context, d drivers.Driver, prefix string) (int, error) {
	nodes, _, err := perNode(ctx, d)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, nd := range nodes {
		cursor := "0"
		for {
			r, err := nd.Do(ctx, "SCAN", cursor, "MATCH", prefix+"*", "COUNT", "1000")
			if err != nil {
				return n, err
			}
			if len(r.Array) != 2 {
				return n, errors.New("redisadmin: malformed SCAN reply")
			}
			cursor = r.Array[0].Str
			n += len(r.Array[1].Array)
			if cursor == "0" {
				break
			}
		}
	}
	return n, nil
}

// KeyCount returns the number of keys in d's database (DBSIZE), summed
// over the masters of a cluster client.
func KeyCount(ctx context.Context, d drivers.Driver) (int64, error) {
	nodes, _, err := perNode(ctx, d)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, nd := range nodes {
		r, err := nd.Do(ctx, "DBSIZE")
		if err != nil {
			return n, err
		}
		n += r.Int
	}
	return n, nil
}

// perNode returns the servers behind d — each master of a cluster client,
// else d itself — and whether d is a cluster client.
func perNode(ctx context.Context, d drivers.Driver) ([]drivers.Driver, bool, error) {
	if sw, ok := d.(*drivers.Switch); ok {
		d = sw.Current()
	}
	nl, ok := d.(drivers.NodeLister)
	if !ok {
		return []drivers.Driver{d}, false, nil
	}
	nodes, err := nl.Nodes(ctx)
	if err != nil {
		return nil, false, err
	}
	if len(nodes) == 1 && nodes[0] == d {
		return nodes, false, nil
	}
	return nodes, true, nil
}

var noTTL = drivers.NewScript(`local n = 0
for _, k in ipairs(KEYS) do
	if redis.call('pttl', k) == -1 then n = n + 1 end
end
return n`)

// StuckLocks counts the lock keys that exist with no TTL on any node
// (checked in batches of 500 keys per node). A node that does not answer
// PING is skipped (a fault may have killed it); its error is returned only
// when it is the only node.
func StuckLocks(ctx context.Context, ds []drivers.Driver, keys []string) (int64, error) {
	stuck := make(map[string]bool)
	var unreachable error
	for _, d := range ds {
		if _, err := d.Do(ctx, "PING"); err != nil {
			unreachable = err // a node a fault killed: check the others
			continue
		}
		if _, cluster, err := perNode(ctx, d); err != nil {
			return 0, err
		} else if cluster { // keys in many slots: one PTTL each
			for _, k := range keys {
				if p, err := d.Do(ctx, "PTTL", k); err != nil {
					return 0, err
				} else if p.Int == -1 {
					stuck[k] = true
				}
			}
			continue
		}
		for lo := 0; lo < len(keys); lo += 500 {
			batch := keys[lo:min(lo+500, len(keys))]
			r, err := d.Eval(ctx, noTTL, batch)
			if err != nil {
				return 0, err
			}
			if r.Int == 0 {
				continue
			}
			for _, k := range batch { // rare: find which
				if p, err := d.Do(ctx, "PTTL", k); err == nil && p.Int == -1 {
					stuck[k] = true
				}
			}
		}
	}
	if unreachable != nil && len(ds) == 1 {
		return 0, unreachable
	}
	return int64(len(stuck)), nil
}

// ServerVersions returns redis_version from INFO server of each server
// behind d: every master of a cluster client, else d's one server.
func ServerVersions(ctx context.Context, d drivers.Driver) ([]string, error) {
	nodes, _, err := perNode(ctx, d)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		v, err := ServerVersion(ctx, n)
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}
