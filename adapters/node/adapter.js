#!/usr/bin/env node
// lockbench's Node.js adapter: the external-lock protocol, version 1
// (docs/external-locks.md), over stdin and stdout, on
//   - redlock (node-redlock, npm "redlock", the release npm's "latest" tag
//     gives: 4.2.0), variant "redlock": Redlock over every server given
//     (one server: a plain SET-if-absent lock; N masters: the quorum);
//   - redis-semaphore (npm "redis-semaphore" 5.x), variants "mutex"
//     (RedisMutex) and "semaphore" (RedisSemaphore, params.permits holders);
// each on one ioredis client per server. The versions are pinned in
// package.json / package-lock.json; build.sh installs them.
//
// Requests are served concurrently (one promise per line); every reply or
// notice is one process.stdout.write of one line. The adapter exits when
// its stdin ends. Test-only variants (broken.js) are passed to main.
'use strict';

const readline = require('node:readline');
const crypto = require('node:crypto');
const net = require('node:net');
const Redis = require('ioredis');
const Redlock = require('redlock');
const { Mutex, Semaphore } = require('redis-semaphore');

const PROTOCOL = 1;

// ---- output: one write per line ----------------------------------------

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

function fail(id, error, msg) {
  const r = { id, ok: false, error };
  if (msg) r.msg = String(msg);
  send(r);
}

// ---- parameters ---------------------------------------------------------

// duration parses a Go time.Duration string ("200ms", "1.5s", "1m0s",
// "0s") or a plain number of milliseconds, into milliseconds.
function duration(s, name) {
  if (s === undefined || s === null || s === '') return undefined;
  if (/^[0-9.]+$/.test(String(s))) return Number(s);
  const units = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60000, h: 3600000 };
  const re = /([0-9.]+)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let m;
  let pos = 0;
  while ((m = re.exec(s)) !== null) {
    total += Number(m[1]) * units[m[2]];
    pos = re.lastIndex;
  }
  if (pos !== String(s).length || Number.isNaN(total)) throw new Error(`parameter ${name}: bad duration ${JSON.stringify(s)}`);
  return total;
}

function integer(s, name, def) {
  if (s === undefined || s === null || s === '') return def;
  const n = Number(s);
  if (!Number.isInteger(n)) throw new Error(`parameter ${name}: not an integer: ${JSON.stringify(s)}`);
  return n;
}

// ---- Redis clients -------------------------------------------------------

function parseAddr(addr) {
  const i = String(addr).lastIndexOf(':');
  if (i < 0) throw new Error(`server address ${JSON.stringify(addr)}: want host:port`);
  let host = addr.slice(0, i);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  const port = Number(addr.slice(i + 1));
  if (!Number.isInteger(port)) throw new Error(`server address ${JSON.stringify(addr)}: bad port`);
  return { host, port };
}

// connect opens one ioredis client per server (credentials from hello)
// and waits for each to answer PING.
async function connect(servers, params) {
  const offlineQueue = ((params || {})['offline-queue'] || 'on') !== 'off';
  for (const s of servers) {
    if (s.cluster || (s.sentinels && s.sentinels.length)) {
      throw new Error(`${s.addr}: Redis Cluster and Sentinel are not supported by this adapter (one plain server per entry)`);
    }
  }
  const clients = servers.map((s) => {
    const { host, port } = parseAddr(s.addr);
    // maxRetriesPerRequest 1: a command to a server that is down fails
    // at the first reconnect that fails (ioredis's default, 20, holds it
    // for 20 reconnects). offline-queue=off: it fails at once.
    const opts = { host, port, db: s.db || 0, lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: offlineQueue };
    if (s.username) opts.username = s.username;
    if (s.password) opts.password = s.password;
    // TLS: Node's CAs plus NODE_EXTRA_CA_CERTS (protocol v1 passes no CA)
    if (s.tls) opts.tls = net.isIP(host) ? {} : { servername: host };
    const c = new Redis(opts);
    c.on('error', (e) => {
      c.lastError = e.message;
      process.stderr.write(`redis ${s.addr}: ${e.message}\n`);
    });
    return c;
  });
  try {
    await Promise.all(clients.map(async (c, i) => {
      try {
        await withTimeout(c.connect(), 5000, `connect to ${servers[i].addr}`);
        await withTimeout(c.ping(), 5000, `PING ${servers[i].addr}`);
      } catch (e) {
        throw new Error(`${servers[i].addr}: ${c.lastError || e.message}`);
      }
    }));
  } catch (e) {
    for (const c of clients) c.disconnect();
    throw e;
  }
  return clients;
}

function withTimeout(p, ms, what) {
  let t;
  return Promise.race([
    p,
    new Promise((_, reject) => { t = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms); }),
  ]).finally(() => clearTimeout(t));
}

function isRedisError(e) {
  if (!e) return false;
  const n = e.name || '';
  return n === 'ReplyError' || n === 'MaxRetriesPerRequestError' || n === 'AbortError' ||
    /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|Connection is closed|Stream isn't writeable/i.test(e.message || '');
}

// ---- variants ------------------------------------------------------------

// Each variant: hello(h, clients) -> {library, version, caps}; acquire(req,
// leaseId) -> {token, handle}; release(handle) -> true (released) or false
// (not the owner's); extend(handle, ttl) -> true/false; abandon(handle).

function pkgVersion(name) {
  return require(`${name}/package.json`).version;
}

// redlock: node-redlock 4.x. Its lock value is random and internal
// (Redlock.prototype._random, called synchronously inside lock() to make
// the value); TokenRedlock takes the value lockbench proposes instead, so
// the key stores exactly the request's token. _executeScript is wrapped
// only to learn why a round failed (the library emits a Redis error as
// 'clientError' and then reports a plain LockError): it tallies, per lock
// value and script kind, the last complete round's refusals and errors.
class TokenRedlock extends Redlock {
  constructor(clients, opts) {
    super(clients, opts);
    this.nextValue = null;
    this.rounds = new Map(); // value + kind -> {cur, last}; a tally is {n, refused, errs, msg}
  }

  _random() {
    const v = this.nextValue;
    this.nextValue = null;
    return v !== null ? v : crypto.randomBytes(16).toString('hex');
  }

  _executeScript(server, name, args, callback) {
    const unlock = name === 'unlockScript';
    const k = (unlock ? args[args.length - 1] : args[args.length - 2]) + (unlock ? ':unlock' : ':lock');
    return super._executeScript(server, name, args, (err, res) => {
      let r = this.rounds.get(k);
      if (!r) this.rounds.set(k, r = { cur: { n: 0, refused: 0, errs: 0, msg: '' }, last: null });
      const t = r.cur;
      t.n++;
      if (err) {
        t.errs++;
        t.msg = err.message;
      } else if (+res === 0) {
        t.refused++;
      }
      if (t.n === this.servers.length) {
        r.last = t;
        r.cur = { n: 0, refused: 0, errs: 0, msg: '' };
      }
      callback(err, res);
    });
  }

  // why tells a failed round: 'refused' when enough servers refused for
  // the quorum to be out of reach whatever the others said (held by
  // another; not the owner), else the last Redis error's message, else
  // 'refused'. It forgets the value's tallies.
  why(value, kind) {
    const k = value + ':' + kind;
    const r = this.rounds.get(k);
    this.rounds.delete(k);
    const t = r && (r.last || r.cur);
    const n = this.servers.length;
    if (!t || t.errs === 0 || t.refused >= n - (Math.floor(n / 2) + 1) + 1) return 'refused';
    return t.msg;
  }

  forget(value) {
    this.rounds.delete(value + ':lock');
    this.rounds.delete(value + ':unlock');
  }
}

function redlockVariant(h, clients) {
  const p = h.params || {};
  const retryDelay = duration(p['retry-delay'], 'retry-delay') || 200; // 0: node-redlock's default
  const retryJitter = duration(p['retry-jitter'], 'retry-jitter') ?? 100;
  const driftFactor = p['drift-factor'] !== undefined ? Number(p['drift-factor']) : 0.01;
  const extend = (p.extend || 'off') === 'on';
  // retryCount 0 on the instance: an acquire with wait_ms 0, and every
  // extend, is one round (redlock 4 reads a per-call retryCount of 0 as
  // "the instance's").
  const rl = new TokenRedlock(clients, { retryCount: 0, retryDelay, retryJitter, driftFactor });
  return {
    library: 'redlock',
    version: pkgVersion('redlock'),
    caps: { renews: false, reentrant: false, fifo: false, read: false, fenced: false, permits: 1, multi_key: false, caller_token: true, extend },
    async acquire(req) {
      // wait_ms > 0: as many retries as fit in the wait at the longest
      // delay (retryDelay + retryJitter) between two rounds.
      const retryCount = req.wait_ms > 0 ? Math.floor(req.wait_ms / Math.max(1, retryDelay + retryJitter)) : 0;
      rl.nextValue = req.token;
      rl.forget(req.token);
      let lock;
      try {
        // the value is drawn synchronously inside lockWithOptions
        lock = await rl.lockWithOptions(req.key, req.ttl_ms, retryCount > 0 ? { retryCount, retryDelay } : {});
      } catch (e) {
        if (e instanceof Redlock.LockError) {
          const why = rl.why(req.token, 'lock');
          rl.forget(req.token);
          if (why !== 'refused') return { error: 'redis', msg: why };
          return { error: 'not_acquired', msg: e.message };
        }
        throw e;
      } finally {
        rl.nextValue = null;
      }
      rl.forget(req.token);
      if (lock.value !== req.token) {
        await rl.unlock(lock).catch(() => {});
        return { error: 'other', msg: `redlock stored ${lock.value}, not the proposed token` };
      }
      return { token: lock.value, handle: { lock } };
    },
    async release(hd) {
      const v = hd.lock.value;
      rl.forget(v);
      try {
        await rl.unlock(hd.lock);
        return true;
      } catch (e) {
        if (!(e instanceof Redlock.LockError)) throw e;
        const why = rl.why(v, 'unlock');
        if (why !== 'refused') throw Object.assign(new Error(why), { name: 'ReplyError' });
        return false;
      } finally {
        rl.forget(v);
      }
    },
    async extend(hd, ttl) {
      if (!extend) return null;
      const v = hd.lock.value;
      rl.forget(v);
      try {
        await rl.extend(hd.lock, ttl);
        return true;
      } catch (e) {
        if (!(e instanceof Redlock.LockError)) throw e;
        const why = rl.why(v, 'lock');
        if (why !== 'refused') throw Object.assign(new Error(why), { name: 'ReplyError' });
        return false;
      } finally {
        rl.forget(v);
      }
    },
    abandon() {},
  };
}

// redis-semaphore names its keys "mutex:<key>" and "semaphore:<key>", with
// no option to change that; those names would fall outside lockbench's
// prefix and away from the key its oracles read. The subclasses keep the
// library's code and set its key (the protected field _key the library's
// own constructors set) to lockbench's key itself.
// Each also tells lockbench of its refreshes: the library's refresh timer
// calls _refresh, and onRenewing sends a renewing notice first.
class KeyedMutex extends Mutex {
  constructor(client, key, opts, onRenewing) {
    super(client, key, opts);
    this._key = key;
    this._onRenewing = onRenewing;
  }
  _refresh() {
    if (this._onRenewing) this._onRenewing();
    return super._refresh();
  }
}

class KeyedSemaphore extends Semaphore {
  constructor(client, key, limit, opts, onRenewing) {
    super(client, key, limit, opts);
    this._key = key;
    this._onRenewing = onRenewing;
  }
  _refresh() {
    if (this._onRenewing) this._onRenewing();
    return super._refresh();
  }
}

function semaphoreVariant(kind, h, clients) {
  if (clients.length !== 1) throw new Error(`redis-semaphore's ${kind} runs on one server, got ${clients.length}`);
  const c = clients[0];
  const p = h.params || {};
  const retryInterval = duration(p['poll-interval'], 'poll-interval') || 10; // 0: the library's default
  const refresh = duration(p.refresh, 'refresh'); // undefined or 0: the library's 0.8 x lockTimeout
  const permits = kind === 'semaphore' ? integer(p.permits, 'permits', 4) : 1;
  if (permits < 1) throw new Error(`parameter permits: ${permits}, want at least 1`);
  return {
    library: 'redis-semaphore',
    version: pkgVersion('redis-semaphore'),
    caps: { renews: true, lost: true, reentrant: false, fifo: false, read: false, fenced: false, permits, multi_key: false, caller_token: true, extend: false },
    async acquire(req, leaseId) {
      const hd = { lost: false, released: false, lock: null };
      const opts = {
        identifier: req.token,
        lockTimeout: req.ttl_ms,
        // wait_ms 0: one attempt (no pause after a refused one)
        acquireTimeout: req.wait_ms > 0 ? req.wait_ms : Math.max(1000, req.ttl_ms),
        acquireAttemptsLimit: req.wait_ms > 0 ? Number.POSITIVE_INFINITY : 1,
        retryInterval: req.wait_ms > 0 ? retryInterval : 0,
        onLockLost: () => {
          if (hd.released || hd.lost) return;
          hd.lost = true;
          send({ op: 'lost', lease: leaseId });
        },
      };
      if (refresh) opts.refreshInterval = refresh;
      const renewing = () => { if (!hd.released && !hd.lost) send({ op: 'renewing', lease: leaseId }); };
      hd.lock = kind === 'semaphore' ? new KeyedSemaphore(c, req.key, permits, opts, renewing) : new KeyedMutex(c, req.key, opts, renewing);
      const ok = await hd.lock.tryAcquire();
      if (!ok) return { error: 'not_acquired' };
      return { token: hd.lock.identifier, handle: hd };
    },
    async release(hd) {
      hd.released = true;
      // The library runs its compare-and-delete (ZREM for the semaphore)
      // and discards the reply: a lease lost without the library noticing
      // is released "ok". Once onLockLost has fired, the release is
      // not_owner (the library sends nothing then).
      const wasLost = hd.lost;
      await hd.lock.release();
      return !wasLost;
    },
    async extend() { return null; },
    abandon(hd) {
      hd.released = true;
      hd.lock.stopRefresh();
    },
  };
}

const variants = {
  '': redlockVariant,
  redlock: redlockVariant,
  mutex: (h, c) => semaphoreVariant('mutex', h, c),
  semaphore: (h, c) => semaphoreVariant('semaphore', h, c),
};

// ---- the protocol --------------------------------------------------------

function main(extra) {
  Object.assign(variants, extra || {});
  let hello = null; // the hello message
  let impl = null; // the variant, once hello succeeded
  let clients = [];
  let ready = null; // promise settled when hello is answered
  let nextLease = 1;
  const leases = new Map(); // lease id -> handle

  process.on('unhandledRejection', (e) => {
    // redis-semaphore's refresh timer rejects on a Redis error; keep serving.
    process.stderr.write(`unhandled: ${e && e.stack ? e.stack : e}\n`);
  });

  async function onHello(m) {
    if (m.v !== PROTOCOL) {
      send({ op: 'hello', v: PROTOCOL, error: `protocol version ${m.v} unsupported; this adapter speaks ${PROTOCOL}` });
      return false;
    }
    const make = variants[m.lock || ''];
    if (!make) {
      send({ op: 'hello', v: PROTOCOL, error: `unknown variant ${JSON.stringify(m.lock)}; this adapter serves ${Object.keys(variants).filter((k) => k).join(', ')}` });
      return false;
    }
    if (!Array.isArray(m.servers) || m.servers.length === 0) {
      send({ op: 'hello', v: PROTOCOL, error: 'hello gives no servers' });
      return false;
    }
    if (typeof m.prefix !== 'string' || m.prefix === '') {
      send({ op: 'hello', v: PROTOCOL, error: 'hello gives no key prefix' });
      return false;
    }
    try {
      clients = await connect(m.servers, m.params);
      impl = make(m, clients);
    } catch (e) {
      send({ op: 'hello', v: PROTOCOL, error: e.message });
      return false;
    }
    hello = m;
    send({ op: 'hello', v: PROTOCOL, name: `${m.lock || 'redlock'}-node`, library: impl.library, version: impl.version,
      runtime: `node ${process.version}`, caps: impl.caps });
    return true;
  }

  async function onRequest(m) {
    const id = m.id;
    if (!(await ready)) {
      if (id !== undefined) fail(id, 'other', 'hello failed');
      return;
    }
    try {
      switch (m.op) {
        case 'acquire': {
          if (m.keys !== undefined) return fail(id, 'unsupported', 'multi-key acquire: caps.multi_key is false');
          if ((m.mode || 'write') !== 'write') return fail(id, 'unsupported', `mode ${m.mode}: caps.read is false`);
          if (typeof m.key !== 'string' || !m.key.startsWith(hello.prefix)) {
            return fail(id, 'other', `key ${JSON.stringify(m.key)} does not start with the run's prefix`);
          }
          const req = { key: m.key, token: m.token, ttl_ms: m.ttl_ms || hello.ttl_ms, wait_ms: m.wait_ms || 0 };
          const lease = nextLease++;
          const r = await impl.acquire(req, lease);
          if (r.error) return fail(id, r.error, r.msg);
          leases.set(lease, r.handle);
          return send({ id, ok: true, lease, token: r.token });
        }
        case 'release': {
          const hd = leases.get(m.lease);
          if (!hd) return fail(id, 'not_owner', `lease ${m.lease} unknown`);
          leases.delete(m.lease);
          const ok = await impl.release(hd);
          return ok ? send({ id, ok: true }) : fail(id, 'not_owner');
        }
        case 'extend': {
          const hd = leases.get(m.lease);
          if (!hd) return fail(id, 'not_owner', `lease ${m.lease} unknown`);
          const ok = await impl.extend(hd, m.ttl_ms || hello.ttl_ms);
          if (ok === null) return fail(id, 'unsupported', 'caps.extend is false');
          return ok ? send({ id, ok: true }) : fail(id, 'not_owner');
        }
        case 'abandon': {
          const hd = leases.get(m.lease);
          leases.delete(m.lease);
          if (hd) impl.abandon(hd);
          return undefined;
        }
        default:
          if (id !== undefined) fail(id, 'unsupported', `op ${JSON.stringify(m.op)}`);
          return undefined;
      }
    } catch (e) {
      if (id !== undefined) fail(id, isRedisError(e) ? 'redis' : 'other', e && e.message ? e.message : String(e));
      else process.stderr.write(`${m.op}: ${e && e.stack ? e.stack : e}\n`);
      return undefined;
    }
  }

  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  rl.on('line', (line) => {
    if (line.trim() === '') return;
    let m;
    try {
      m = JSON.parse(line);
    } catch (e) {
      process.stderr.write(`bad JSON line: ${e.message}\n`);
      return;
    }
    if (m.op === 'hello' && ready === null) {
      ready = onHello(m);
      return;
    }
    if (ready === null) {
      if (m.id !== undefined) fail(m.id, 'other', 'no hello yet');
      return;
    }
    onRequest(m);
  });
  rl.on('close', () => {
    // The end of the scenario: stop every renewal without releasing (as a
    // process that ends does) and leave.
    for (const hd of leases.values()) {
      try { if (impl) impl.abandon(hd); } catch (_) { /* leaving anyway */ }
    }
    for (const c of clients) c.disconnect();
    process.exit(0);
  });
}

module.exports = { main, variants, send, fail };

if (require.main === module) main();
