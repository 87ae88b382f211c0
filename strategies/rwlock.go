package strategies

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

func init() {
	Register("rwlock", Info{Desc: "read-write lock in one hash (Redisson RReadWriteLock model): many readers or one writer; reads take the read side (--read-ratio)"},
		func(c Config) (*rwlock, error) { return &rwlock{d: c.Nodes[0], ttl: c.TTL, tokens: c.Tokens}, nil })
}

// ReadLocker is implemented by lockers with a shared (read) side.
type ReadLocker interface {
	// TryAcquireRead makes one attempt at the read side of key.
	TryAcquireRead(ctx context.Context, key string) (Lease, error)
}

// ReadSide returns a Locker whose TryAcquire takes l's read side, or l
// itself when l has none (then readers exclude each other too).
func ReadSide(l Locker) Locker {
	if r, ok := l.(ReadLocker); ok {
		if _, own := l.(OwnRetry); own {
			return readSideRetry{readSide{r}}
		}
		return readSide{r}
	}
	return l
}

type readSide struct{ r ReadLocker }

// readSideRetry is the read side of an OwnRetry locker (an external
// read-write lock: Redisson's RReadWriteLock): it keeps the marker, so
// that a read's acquire runs with the acquire timeout as its deadline
// (the library's own wait) and not as one attempt.
type readSideRetry struct{ readSide }

// OwnRetry: the library's own wait (OwnRetry).
func (readSideRetry) OwnRetry() {}

func (s readSide) TryAcquire(ctx context.Context, key string) (Lease, error) {
	return s.r.TryAcquireRead(ctx, key)
}

// The rwlock hash holds one field per holder: the reader's owner id, or
// "<owner>:w" for the writer; its value is "<holds>:<deadline>", the
// holder's hold count and the end of its lease (server time, ms, TIME).
// Redisson's model also keeps a field "mode" ("read" or "write"); here
// the mode follows from the holder fields (a writer excludes everyone
// else, so the lock is in write mode exactly when its one field ends in
// ":w"), so that every field of the lock key is a holder's token: the
// liveness oracle reads the hash's field names as the tokens stored
// (TokenTracker). Owner ids never end in ":w".
//
// Each share expires on its own, as in Redisson's RedissonReadLock (which
// keeps a timeout key {name}:<id>:<thread>:rwlock_timeout:<n> per read
// hold and sets the lock key's expiry to the longest of them): every
// script first drops the fields whose deadline has passed (rwPrelude),
// and sets the key to expire with its last live share, never further. A
// reader that dies holding leaves a share that ends with its own lease:
// it is dropped by the first call on the lock after that, or goes with
// the key, and other readers' arrivals do not keep it (a PEXPIRE of the
// whole hash per arrival would: the orphan shares of the liveness
// oracle). The deadlines are in the server's time (TIME), as the key's
// own expiry is: client clocks do not matter, and a jump of the server's
// clock moves both alike.
//
// rwPrelude reads the whole hash (HGETALL) and leaves, for the script
// after it, live (a live holder field's hold count), dl (its deadline, as
// stored) and last (the latest deadline): every acquire and release costs
// O(holders), as Redisson's read lock's release walks every holder's
// timeout keys.
const rwPrelude = `local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local live, dl, last = {}, {}, 0
local kv = redis.call('hgetall', KEYS[1])
for i = 1, #kv, 2 do
	local n, ds = string.match(kv[i + 1], '^(%d+):(%d+)$')
	local d = tonumber(ds)
	if d and d > now then
		live[kv[i]] = tonumber(n)
		dl[kv[i]] = ds
		last = math.max(last, d)
	else
		redis.call('hdel', KEYS[1], kv[i])
	end
end
`

// ARGV[1] = lease ms, ARGV[2] = holder field; rwTake (after rwPrelude
// and a script's test) adds a hold of ARGV[2] with a fresh lease and
// sets the key's expiry to its latest share's.
const rwTake = `local d = now + tonumber(ARGV[1])
redis.call('hset', KEYS[1], ARGV[2], ((live[ARGV[2]] or 0) + 1) .. ':' .. d)
redis.call('pexpire', KEYS[1], math.max(last, d) - now)
return nil
`

var (
	// A reader enters unless the one live holder is a writer.
	rwReadScript = drivers.NewScript(rwPrelude + `local writer = false
for f in pairs(live) do
	if string.sub(f, -2) == ':w' then
		writer = true
	end
end
if writer then
	return redis.call('pttl', KEYS[1])
end
` + rwTake)
	// A writer enters a free lock, or re-enters one whose one live holder
	// is itself (its field "<owner>:w").
	rwWriteScript = drivers.NewScript(rwPrelude + `for f in pairs(live) do
	if f ~= ARGV[2] then
		return redis.call('pttl', KEYS[1])
	end
end
` + rwTake)
	// rwUnlockScript drops one hold of holder ARGV[1]; nil when it holds
	// none (its share expired); 1 when no holder is left (Redis deletes a
	// hash with no field), else 0, the key then expiring with its last
	// live share.
	rwUnlockScript = drivers.NewScript(rwPrelude + `local n = live[ARGV[1]]
if not n then
	return nil
end
if n > 1 then
	redis.call('hset', KEYS[1], ARGV[1], (n - 1) .. ':' .. dl[ARGV[1]])
	return 0
end
redis.call('hdel', KEYS[1], ARGV[1])
live[ARGV[1]] = nil
if redis.call('exists', KEYS[1]) == 0 then
	return 1
end
last = 0
for f in pairs(live) do
	last = math.max(last, tonumber(dl[f]))
end
redis.call('pexpire', KEYS[1], last - now)
return 0`)
)

// rwlock lets any number of readers, or one writer, hold key. Holder
// fields are the worker's owner id, so a worker's holds are reentrant on
// each side.
type rwlock struct {
	d      drivers.Driver
	ttl    time.Duration
	tokens TokenTracker // told of the holder field before each script
}

var (
	_ Locker     = (*rwlock)(nil)
	_ ReadLocker = (*rwlock)(nil)
	_ Reentrant  = (*rwlock)(nil)
)

// Reentrant: the writer's nested acquires count up in its field.
func (*rwlock) Reentrant() {}

func (r *rwlock) TryAcquire(ctx context.Context, key string) (Lease, error) {
	return r.take(ctx, rwWriteScript, key, ClientFrom(ctx).Owner+":w")
}

func (r *rwlock) TryAcquireRead(ctx context.Context, key string) (Lease, error) {
	return r.take(ctx, rwReadScript, key, ClientFrom(ctx).Owner)
}

func (r *rwlock) take(ctx context.Context, s *drivers.Script, key, holder string) (Lease, error) {
	sent(r.tokens, ctx, key, holder)
	res, err := r.d.Eval(ctx, s, []string{key}, ms(r.ttl), holder)
	if err != nil {
		return nil, err
	}
	if !res.IsNil() {
		return nil, ErrNotAcquired
	}
	return &lease{key: key, token: holder, owner: r}, nil
}

func (r *rwlock) release(ctx context.Context, key, holder string) error {
	res, err := r.d.Eval(ctx, rwUnlockScript, []string{key}, holder)
	if err != nil {
		return err
	}
	if res.IsNil() {
		return ErrNotOwner
	}
	return nil
}
