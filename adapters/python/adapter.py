#!/usr/bin/env python3
"""lockbench's adapter for two Python Redis locks, external-lock protocol v1.

lockbench starts this program once per scenario and talks to it over its
stdin and stdout (newline-delimited JSON, docs/external-locks.md). The
variant is hello's "lock":

  redis-py-lock            redis-py's redis.lock.Lock (PyPI "redis"), taken
                           as it is normally used: Redis.lock(name,
                           timeout=TTL) and acquire(blocking=True,
                           blocking_timeout=wait) with lockbench's token as
                           token= (SET NX PX, then a retry every 100 ms, the
                           library's sleep (hello param "sleep", a Go
                           duration), until the wait runs out).
                           Release and extend(replace_ttl=True) are its
                           compare-and-delete and compare-and-PEXPIRE
                           scripts. "" is this variant.
  python-redis-lock        redis_lock.Lock (PyPI "python-redis-lock"):
                           SET NX EX with id=lockbench's token, one attempt
                           per acquire (blocking=False); release is its
                           script that deletes the key and pushes to a
                           signal list. Its expire is whole seconds: a TTL
                           that is not a whole number of seconds is refused.
  python-redis-lock-renew  the same with auto_renewal=True: a thread per
                           held lock renews it every 2/3 of the TTL; a
                           renewal that fails stops that thread and this
                           adapter sends "lost".

python-redis-lock names its keys "lock:" + name and "lock-signal:" + name,
outside lockbench's prefix; the PrefixedLock subclass below names them
KEY (lockbench's lock key itself) and PREFIX + "lock-signal:" + the rest of
KEY after PREFIX, so every key written starts with hello's prefix.

One process serves every client: the main thread reads stdin, each
request runs on a thread pool of clients + 2 threads, one Redis client
(a blocking pool of clients + 4 connections) serves them all, and replies
are written whole under a lock. The program exits when stdin closes.
"""

import fractions
import importlib.metadata
import itertools
import json
import logging
import os
import platform
import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import redis
import redis_lock
from redis.exceptions import LockError, LockNotOwnedError, RedisError

# python-redis-lock logs a warning ("Failed to acquire Lock(...)") for every
# refused non-blocking attempt; Python's last-resort handler would print each
# on stderr. Errors still show.
logging.getLogger("redis_lock").setLevel(logging.ERROR)

VARIANTS = ("redis-py-lock", "python-redis-lock", "python-redis-lock-renew")

_out = threading.Lock()


def send(msg):
    """Writes msg as one JSON line on stdout, whole, under a lock."""
    line = (json.dumps(msg, separators=(",", ":")) + "\n").encode()
    with _out:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()


def log(text):
    """A line on stderr (lockbench keeps it and prints the last lines on a failure)."""
    sys.stderr.write("python adapter: " + text + "\n")
    sys.stderr.flush()


_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def go_duration(text):
    """Seconds in a Go duration string ("100ms", "1.5s", "1m30s"; "0").
    ValueError for anything else."""
    if text == "0":
        return 0.0
    parts = re.findall(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|ms|s|m|h)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"not a duration: {text!r}")
    return sum(float(n) * _UNITS[u] for n, u in parts)


class PrefixedLock(redis_lock.Lock):
    """redis_lock.Lock whose keys are lockbench's: the lock key is key itself
    (the library's would be "lock:" + key) and the signal list prefix +
    "lock-signal:" + the rest of key (the library's "lock-signal:" + key).
    The library keeps both names only in _name and _signal, set once in
    __init__, and every command (acquire's SET, the release, extend and
    reset scripts) reads them there.

    on_lost, when given, is called once when the library's renewal thread
    fails to extend the lock (the key is gone or another's: NotAcquired, or
    a Redis error); that thread then stops, as the library's would on the
    exception, but without a traceback on stderr."""

    def __init__(self, client, key, prefix, on_lost=None, **kwargs):
        super().__init__(client, key, **kwargs)
        rest = key[len(prefix):] if key.startswith(prefix) else key
        self._name = key
        self._signal = prefix + "lock-signal:" + rest
        self._on_lost = on_lost

    def extend(self, expire=None):
        renewer = self._lock_renewal_thread
        if renewer is None or threading.current_thread() is not renewer:
            return super().extend(expire)
        try:
            return super().extend(expire)
        except (redis_lock.NotAcquired, RedisError) as e:
            self._lock_renewal_stop.set()  # the renewal loop ends at its next wait
            if self._on_lost is not None:
                self._on_lost(e)
            return None


class Adapter:
    """The state of one scenario: the variant, the Redis client, the leases."""

    def __init__(self, hello):
        self.variant = hello.get("lock") or "redis-py-lock"
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown lock variant {self.variant!r}: this adapter serves {', '.join(VARIANTS)}")
        self.prefix = hello["prefix"]
        self.clients = int(hello["clients"])
        ttl_ms = int(hello["ttl_ms"])
        if self.variant != "redis-py-lock" and ttl_ms % 1000 != 0:
            raise ValueError(
                f"{self.variant}: the library's expire is whole seconds (SET EX); "
                f"a TTL of {ttl_ms} ms is not, give --ttl in whole seconds")
        params = hello.get("params") or {}
        # redis-py Lock's pause between tries while it waits (its sleep=).
        self.sleep = go_duration(params.get("sleep", "100ms"))
        # extend=on: leases are extended by lockbench after each unit of
        # work (Lock.extend); off (the default): the lease is the TTL.
        self.extend_on = params.get("extend", "off") == "on"
        if self.sleep <= 0:
            raise ValueError(f"sleep must be more than 0, got {params.get('sleep')!r}")
        servers = hello["servers"]
        if len(servers) != 1:
            raise ValueError(f"{self.variant} runs on one Redis server, got {len(servers)}")
        s = servers[0]
        host, _, port = s["addr"].rpartition(":")
        pool = redis.BlockingConnectionPool(
            max_connections=self.clients + 4, timeout=30,
            connection_class=redis.SSLConnection if s.get("tls") else redis.Connection,
            host=host.strip("[]"), port=int(port), db=int(s.get("db") or 0),
            username=s.get("username") or None, password=s.get("password") or None)
        self.redis = redis.Redis(connection_pool=pool)
        self.redis.ping()
        self.leases = {}
        self.leases_lock = threading.Lock()
        self.next_lease = itertools.count(1)

    def hello_reply(self):
        lib = "redis" if self.variant == "redis-py-lock" else "python-redis-lock"
        renew = self.variant == "python-redis-lock-renew"
        return {
            "op": "hello", "v": 1, "name": self.variant,
            "library": lib, "version": importlib.metadata.version(lib),
            "runtime": "python " + platform.python_version(),
            "caps": {"renews": renew, "lost": renew, "reentrant": False,
                     "fifo": False, "read": False, "fenced": False, "permits": 1,
                     "multi_key": False, "caller_token": True, "extend": self.extend_on},
        }

    # Requests. Each returns the reply's fields besides id.

    def acquire(self, req):
        if req.get("keys") or req.get("mode", "write") != "write":
            return {"ok": False, "error": "unsupported", "msg": "only write locks on one key"}
        key, token, ttl_ms = req["key"], req["token"], int(req["ttl_ms"])
        wait_ms = int(req.get("wait_ms") or 0)
        lease = next(self.next_lease)
        if self.variant == "redis-py-lock":
            # timeout as an exact fraction: redis-py sends int(timeout * 1000)
            # ms, and a float 1.001 s would be 1000 ms.
            lock = self.redis.lock(key, timeout=fractions.Fraction(ttl_ms, 1000), sleep=self.sleep, thread_local=False)
            if wait_ms > 0:
                ok = lock.acquire(blocking=True, blocking_timeout=wait_ms / 1000, token=token)
            else:
                ok = lock.acquire(blocking=False, token=token)
        else:
            if ttl_ms % 1000 != 0:
                return {"ok": False, "error": "unsupported", "msg": f"python-redis-lock's expire is whole seconds, not {ttl_ms} ms"}
            renew = self.variant == "python-redis-lock-renew"
            lock = PrefixedLock(self.redis, key, self.prefix, expire=ttl_ms // 1000, id=token,
                                auto_renewal=renew, on_lost=self._lost(lease) if renew else None)
            ok = lock.acquire(blocking=False)
        if not ok:
            return {"ok": False, "error": "not_acquired"}
        with self.leases_lock:
            self.leases[lease] = lock
        return {"ok": True, "lease": lease, "token": token}

    def _lost(self, lease):
        def lost(err):
            log(f"lease {lease}: renewal failed ({type(err).__name__}: {err}); sent lost")
            send({"op": "lost", "lease": lease})
        return lost

    def _take(self, lease, forget):
        with self.leases_lock:
            return self.leases.pop(lease, None) if forget else self.leases.get(lease)

    def release(self, req):
        lock = self._take(req["lease"], True)
        if lock is None:
            return {"ok": False, "error": "not_owner", "msg": "no such lease"}
        try:
            lock.release()
        except (LockNotOwnedError, redis_lock.NotAcquired):
            return {"ok": False, "error": "not_owner"}
        except LockError as e:  # redis-py: a lock without a token (never held)
            return {"ok": False, "error": "not_owner", "msg": str(e)}
        return {"ok": True}

    def extend(self, req):
        lock = self._take(req["lease"], False)
        if lock is None:
            return {"ok": False, "error": "not_owner", "msg": "no such lease"}
        ttl_ms = int(req["ttl_ms"])
        try:
            if isinstance(lock, redis_lock.Lock):
                if ttl_ms % 1000 != 0 or ttl_ms <= 0:
                    return {"ok": False, "error": "unsupported", "msg": f"python-redis-lock's expire is whole seconds, not {ttl_ms} ms"}
                lock.extend(expire=ttl_ms // 1000)
            else:
                lock.extend(fractions.Fraction(ttl_ms, 1000), replace_ttl=True)
        except (LockNotOwnedError, redis_lock.NotAcquired):
            return {"ok": False, "error": "not_owner"}
        return {"ok": True}

    def abandon(self, req):
        lock = self._take(req["lease"], True)
        if isinstance(lock, redis_lock.Lock):
            lock._stop_lock_renewer()  # the renewal thread stops; the key is left to expire

    def serve(self, req):
        op, rid = req.get("op"), req.get("id")
        try:
            if op == "abandon":
                self.abandon(req)
                return
            handler = {"acquire": self.acquire, "release": self.release, "extend": self.extend}.get(op)
            if handler is None:
                reply = {"ok": False, "error": "unsupported", "msg": f"unknown op {op!r}"}
            else:
                reply = handler(req)
        except RedisError as e:
            reply = {"ok": False, "error": "redis", "msg": f"{type(e).__name__}: {e}"}
        except Exception as e:  # noqa: BLE001 - every failure is answered
            reply = {"ok": False, "error": "other", "msg": f"{type(e).__name__}: {e}"}
        if rid is not None:
            reply["id"] = rid
            send(reply)


def main():
    stdin = sys.stdin.buffer
    first = stdin.readline()
    if not first:
        return 0
    try:
        hello = json.loads(first)
        if hello.get("op") != "hello":
            raise ValueError(f"the first message is {hello.get('op')!r}, not hello")
        if hello.get("v") != 1:
            raise ValueError(f"protocol version {hello.get('v')!r}; this adapter speaks 1")
        adapter = Adapter(hello)
    except Exception as e:  # noqa: BLE001 - the hello reply carries it
        send({"op": "hello", "v": 1, "error": f"{type(e).__name__}: {e}"})
        return 1
    send(adapter.hello_reply())
    pool = ThreadPoolExecutor(max_workers=adapter.clients + 2, thread_name_prefix="req")
    for line in stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
        except ValueError as e:
            log(f"bad request line: {e}")
            continue
        pool.submit(adapter.serve, req)
    # stdin closed: the scenario is over; replies still owed are not waited for.
    with _out:
        sys.stdout.buffer.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
