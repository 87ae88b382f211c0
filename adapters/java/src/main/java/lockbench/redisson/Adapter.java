package lockbench.redisson;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.redisson.LockbenchLocks;
import org.redisson.Redisson;
import org.redisson.RedissonFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.client.RedisException;
import org.redisson.client.RedisTimeoutException;
import org.redisson.client.codec.StringCodec;
import org.redisson.command.CommandAsyncExecutor;
import org.redisson.config.Config;
import org.redisson.config.SingleServerConfig;
import org.redisson.renewal.LockbenchLockTask;

/**
 * One scenario's adapter: the variant hello named, its Redisson client and
 * the leases held. Variants (hello "lock"):
 * <ul>
 * <li>{@code lock} (default): RLock, tryLockAsync(wait, leaseTime = ttl, threadId): fixed lease, no watchdog;
 * <li>{@code watchdog}: RLock, tryLockAsync(wait, -1, threadId): the watchdog renews,
 *     Config.lockWatchdogTimeout = ttl (renewal every ttl/3);
 * <li>{@code fair}: RFairLock with a fixed lease;
 * <li>{@code rw}: RReadWriteLock, writeLock for mode write and readLock for mode read, fixed lease;
 * <li>{@code fenced}: RFencedLock, tryLockAndGetTokenAsync: the grant carries the fencing token;
 * <li>{@code semaphore}: RPermitExpirableSemaphore, trySetPermits(permits) once per key,
 *     tryAcquireAsync(wait, leaseTime = ttl): the permit id is the token; extend is updateLeaseTime.
 * </ul>
 * Each lockbench client is the Redisson "thread" client+1, so a client is a
 * reentrant owner of its own.
 */
final class Adapter {
    private final Main.Out out;
    private final String variant;
    private final String prefix;
    private final long ttl;
    private final int permits;
    private final String version;
    private final String runtime;
    private final RedissonClient client;
    private final CommandAsyncExecutor executor;

    private final ConcurrentHashMap<String, Object> locks = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Object> readLocks = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, CompletableFuture<Boolean>> semaphoreInit = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, Lease> leases = new ConcurrentHashMap<>();
    private final AtomicLong nextLease = new AtomicLong();

    private final Watchdog watchdog;
    private final ScheduledExecutorService poller;

    /** A held lock: the Redisson object, its key, the owner (thread id), or the semaphore's permit id. */
    private static final class Lease {
        final Object lock;
        final String key;
        final long threadId;
        final String permitId;

        Lease(Object lock, String key, long threadId, String permitId) {
            this.lock = lock;
            this.key = key;
            this.threadId = threadId;
            this.permitId = permitId;
        }
    }

    Adapter(Map<String, Object> hello, Main.Out out, String version, String runtime) {
        this.out = out;
        this.version = version;
        this.runtime = runtime;
        String v = str(hello.get("lock"));
        this.variant = v.isEmpty() ? "lock" : v;
        switch (variant) {
            case "lock": case "watchdog": case "fair": case "rw": case "fenced": case "semaphore":
                break;
            default:
                throw new IllegalArgumentException("unknown variant " + variant
                        + " (lock, watchdog, fair, rw, fenced, semaphore)");
        }
        this.prefix = str(hello.get("prefix"));
        if (prefix.isEmpty()) {
            throw new IllegalArgumentException("hello has no prefix");
        }
        this.ttl = num(hello.get("ttl_ms"));
        if (ttl <= 0) {
            throw new IllegalArgumentException("hello's ttl_ms must be more than 0");
        }
        long clients = Math.max(1, num(hello.get("clients")));
        Object ps = hello.get("params");
        String p = ps instanceof Map ? str(((Map<?, ?>) ps).get("permits")) : "";
        if (p.isEmpty()) {
            p = "4";
        }
        try {
            this.permits = Integer.parseInt(p);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("params.permits " + p + " is not a whole number");
        }
        if (permits < 1) {
            throw new IllegalArgumentException("params.permits must be at least 1");
        }
        Object ss = hello.get("servers");
        if (!(ss instanceof List) || ((List<?>) ss).isEmpty()) {
            throw new IllegalArgumentException("hello has no servers");
        }
        List<?> servers = (List<?>) ss;
        if (servers.size() != 1) {
            throw new IllegalArgumentException("redisson adapter: " + servers.size()
                    + " servers given; it runs Redisson's single-server config, on one server only");
        }
        Map<?, ?> s = (Map<?, ?>) servers.get(0);
        if (s.get("sentinels") instanceof List && !((List<?>) s.get("sentinels")).isEmpty()
                || !str(s.get("master_name")).isEmpty() || Boolean.TRUE.equals(s.get("cluster"))) {
            throw new IllegalArgumentException("redisson adapter: Sentinel and Cluster are not supported;"
                    + " it runs Redisson's single-server config");
        }

        Config c = new Config();
        c.setCodec(StringCodec.INSTANCE);
        c.setNettyThreads(4);
        c.setThreads(4);
        if (variant.equals("watchdog")) {
            c.setLockWatchdogTimeout(ttl);
        }
        int pool = (int) Math.min(Math.max(clients, 4), 64);
        SingleServerConfig sc = c.useSingleServer()
                .setAddress((Boolean.TRUE.equals(s.get("tls")) ? "rediss://" : "redis://") + str(s.get("addr")))
                .setDatabase((int) num(s.get("db")))
                .setConnectionPoolSize(pool)
                .setConnectionMinimumIdleSize(Math.min(pool, 4))
                .setSubscriptionConnectionPoolSize((int) Math.max(8, clients / 5 + 1))
                .setSubscriptionConnectionMinimumIdleSize(1);
        if (!str(s.get("password")).isEmpty()) {
            c.setPassword(str(s.get("password")));
        }
        if (!str(s.get("username")).isEmpty()) {
            c.setUsername(str(s.get("username")));
        }
        this.client = Redisson.create(c);
        this.executor = ((Redisson) client).getCommandExecutor();
        if (variant.equals("watchdog")) {
            this.watchdog = new Watchdog(executor.getServiceManager().getRenewalScheduler());
            watchdog.install(new LockbenchLockTask(ttl, executor, c.getLockWatchdogBatchSize(), this::renewing));
            long every = Math.max(10, Math.min(200, ttl / 10));
            this.poller = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "lost");
                t.setDaemon(true);
                return t;
            });
            poller.scheduleWithFixedDelay(this::findLost, every, every, TimeUnit.MILLISECONDS);
        } else {
            this.watchdog = null;
            this.poller = null;
        }
    }

    /**
     * Sends "renewing" for each held lease of the locks Redisson's watchdog
     * is about to renew (every lease of the owner it renews: a client's
     * reentrant holds share one renewal).
     */
    private void renewing(List<LockbenchLockTask.Renewal> rs) {
        if (rs.isEmpty()) {
            return;
        }
        java.util.Set<String> due = new java.util.HashSet<>();
        for (LockbenchLockTask.Renewal r : rs) {
            due.add(r.threadId + " " + r.name);
        }
        for (Map.Entry<Long, Lease> e : leases.entrySet()) {
            Lease l = e.getValue();
            if (due.contains(l.threadId + " " + l.key)) {
                out.line("{\"op\":\"renewing\",\"lease\":" + e.getKey() + "}");
            }
        }
    }

    /**
     * Sends "lost" for each watchdog lease whose renewal Redisson has
     * dropped: its watchdog drops a lock when the renewal script finds the
     * holder's hash field gone (the lease expired or was taken over),
     * and tells the application nothing; Watchdog reads that finding.
     */
    private void findLost() {
        try {
            for (Map.Entry<Long, Lease> e : leases.entrySet()) {
                Lease l = e.getValue();
                if (watchdog.renewing(l.key, l.threadId)) {
                    continue;
                }
                if (leases.remove(e.getKey(), l)) {
                    out.line("{\"op\":\"lost\",\"lease\":" + e.getKey() + "}");
                }
            }
        } catch (RuntimeException ex) {
            System.err.println("lockbench-redisson: lost check: " + ex);
        }
    }

    String helloReply() {
        boolean renews = variant.equals("watchdog");
        StringBuilder b = new StringBuilder("{\"op\":\"hello\",\"v\":1,\"name\":");
        Json.quote(b, variant.equals("lock") ? "redisson" : "redisson-" + variant);
        b.append(",\"library\":\"org.redisson:redisson\",\"version\":");
        Json.quote(b, version).append(",\"runtime\":");
        Json.quote(b, runtime);
        b.append(",\"caps\":{\"renews\":").append(renews)
                .append(",\"lost\":").append(renews)
                .append(",\"reentrant\":").append(!variant.equals("semaphore"))
                .append(",\"fifo\":").append(variant.equals("fair"))
                .append(",\"read\":").append(variant.equals("rw"))
                .append(",\"fenced\":").append(variant.equals("fenced"))
                .append(",\"permits\":").append(variant.equals("semaphore") ? permits : 1)
                .append(",\"multi_key\":false,\"caller_token\":false")
                .append(",\"extend\":").append(variant.equals("semaphore"))
                .append("}}");
        return b.toString();
    }

    void shutdown() {
        if (poller != null) {
            poller.shutdownNow();
        }
        client.shutdown(0, 1, TimeUnit.SECONDS);
    }

    void handle(String line) {
        Map<String, Object> m;
        try {
            Object o = Json.parse(line);
            if (!(o instanceof Map)) {
                throw new IllegalArgumentException("not a JSON object");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> mm = (Map<String, Object>) o;
            m = mm;
        } catch (IllegalArgumentException e) {
            System.err.println("lockbench-redisson: " + e.getMessage() + ": " + line);
            return;
        }
        Object id = m.get("id");
        String op = str(m.get("op"));
        try {
            switch (op) {
                case "acquire":
                    acquire(id, m);
                    return;
                case "release":
                    release(id, num(m.get("lease")));
                    return;
                case "extend":
                    extend(id, num(m.get("lease")), num(m.get("ttl_ms")));
                    return;
                case "abandon":
                    abandon(num(m.get("lease")));
                    return;
                default:
                    if (id != null) {
                        error(id, "unsupported", "unknown op " + op);
                    }
            }
        } catch (RuntimeException e) {
            if (id != null) {
                failed(id, e);
            } else {
                System.err.println("lockbench-redisson: " + op + ": " + e);
            }
        }
    }

    private Object lockOf(String key, boolean read) {
        if (read) {
            return readLocks.computeIfAbsent(key, k -> new LockbenchLocks.ReadLock(executor, k));
        }
        return locks.computeIfAbsent(key, k -> {
            switch (variant) {
                case "fair":
                    return new LockbenchLocks.FairLock(executor, k);
                case "rw":
                    return new LockbenchLocks.WriteLock(executor, k);
                case "fenced":
                    return new LockbenchLocks.FencedLock(executor, k);
                case "semaphore":
                    return new LockbenchLocks.Semaphore(executor, k);
                default:
                    return new LockbenchLocks.Lock(executor, k);
            }
        });
    }

    private void acquire(Object id, Map<String, Object> m) {
        String key = str(m.get("key"));
        if (key.isEmpty() || m.containsKey("keys")) {
            error(id, "unsupported", "acquire needs one key (no multi-key acquire)");
            return;
        }
        if (!key.startsWith(prefix)) {
            error(id, "unsupported", "key " + key + " is outside the run's prefix " + prefix);
            return;
        }
        String mode = str(m.get("mode"));
        boolean read = mode.equals("read");
        if (read && !variant.equals("rw")) {
            error(id, "unsupported", "mode read needs variant rw");
            return;
        } else if (!read && !mode.isEmpty() && !mode.equals("write")) {
            error(id, "unsupported", "unknown mode " + mode);
            return;
        }
        long t = num(m.get("ttl_ms"));
        long leaseTime = t > 0 ? t : ttl;
        long wait = Math.max(0, num(m.get("wait_ms")));
        long threadId = num(m.get("client")) + 1;
        Object lock = lockOf(key, read);

        if (lock instanceof LockbenchLocks.Semaphore) {
            LockbenchLocks.Semaphore sem = (LockbenchLocks.Semaphore) lock;
            CompletableFuture<Boolean> init = semaphoreInit.computeIfAbsent(key,
                    k -> sem.trySetPermitsAsync(permits).toCompletableFuture());
            init.thenCompose(ok -> sem.tryAcquireAsync(wait, leaseTime, TimeUnit.MILLISECONDS))
                    .whenComplete((permitId, e) -> {
                        if (e != null) {
                            semaphoreInit.remove(key, init);
                            failed(id, e);
                        } else if (permitId == null) {
                            error(id, "not_acquired", null);
                        } else {
                            granted(id, new Lease(sem, key, threadId, permitId), permitId, null);
                        }
                    });
            return;
        }

        long lt = variant.equals("watchdog") ? -1 : leaseTime;
        LockbenchLocks.Held held = (LockbenchLocks.Held) lock;
        if (lock instanceof RedissonFencedLock) {
            ((RedissonFencedLock) lock).tryLockAndGetTokenAsync(wait, lt, TimeUnit.MILLISECONDS, threadId)
                    .whenComplete((fence, e) -> {
                        if (e != null) {
                            failed(id, e);
                        } else if (fence == null) {
                            error(id, "not_acquired", null);
                        } else {
                            granted(id, new Lease(lock, key, threadId, null), held.field(threadId), fence);
                        }
                    });
            return;
        }
        ((RLock) lock).tryLockAsync(wait, lt, TimeUnit.MILLISECONDS, threadId).whenComplete((ok, e) -> {
            if (e != null) {
                failed(id, e);
            } else if (!Boolean.TRUE.equals(ok)) {
                error(id, "not_acquired", null);
            } else {
                granted(id, new Lease(lock, key, threadId, null), held.field(threadId), null);
            }
        });
    }

    private void granted(Object id, Lease l, String token, Long fence) {
        long n = nextLease.incrementAndGet();
        leases.put(n, l);
        StringBuilder b = new StringBuilder("{\"id\":").append(id).append(",\"ok\":true,\"lease\":").append(n)
                .append(",\"token\":");
        Json.quote(b, token);
        if (fence != null) {
            b.append(",\"fence\":").append(fence);
        }
        out.line(b.append('}').toString());
    }

    private void release(Object id, long lease) {
        Lease l = leases.remove(lease);
        if (l == null) {
            error(id, "not_owner", "no lease " + lease);
            return;
        }
        if (l.permitId != null) {
            LockbenchLocks.Semaphore sem = (LockbenchLocks.Semaphore) l.lock;
            sem.tryReleaseAsync(l.permitId).whenComplete((ok, e) -> {
                if (e != null) {
                    failed(id, e);
                } else if (!Boolean.TRUE.equals(ok)) {
                    error(id, "not_owner", null);
                } else {
                    ok(id);
                }
            });
            return;
        }
        ((RLock) l.lock).unlockAsync(l.threadId).whenComplete((v, e) -> {
            if (e == null) {
                ok(id);
            } else if (Main.rootCause(e) instanceof IllegalMonitorStateException) {
                error(id, "not_owner", null);
            } else {
                failed(id, e);
            }
        });
    }

    private void extend(Object id, long lease, long ttlMs) {
        Lease l = leases.get(lease);
        if (l == null) {
            error(id, "not_owner", "no lease " + lease);
            return;
        }
        if (l.permitId == null) {
            error(id, "unsupported", "Redisson's RLock has no owner-checked extend");
            return;
        }
        LockbenchLocks.Semaphore sem = (LockbenchLocks.Semaphore) l.lock;
        sem.updateLeaseTimeAsync(l.permitId, ttlMs > 0 ? ttlMs : ttl, TimeUnit.MILLISECONDS).whenComplete((ok, e) -> {
            if (e != null) {
                failed(id, e);
            } else if (!Boolean.TRUE.equals(ok)) {
                error(id, "not_owner", null);
            } else {
                ok(id);
            }
        });
    }

    /** A crashed holder: stop the watchdog's renewal of the lease and forget it; never unlock. */
    private void abandon(long lease) {
        Lease l = leases.remove(lease);
        if (l != null && l.lock instanceof LockbenchLocks.Held) {
            ((LockbenchLocks.Held) l.lock).abandon(l.threadId);
        }
    }

    private void ok(Object id) {
        out.line("{\"id\":" + id + ",\"ok\":true}");
    }

    private void error(Object id, String kind, String msg) {
        StringBuilder b = new StringBuilder("{\"id\":").append(id).append(",\"ok\":false,\"error\":\"")
                .append(kind).append('"');
        if (msg != null) {
            b.append(",\"msg\":");
            Json.quote(b, msg);
        }
        out.line(b.append('}').toString());
    }

    private void failed(Object id, Throwable e) {
        Throwable c = Main.rootCause(e);
        String kind = c instanceof RedisTimeoutException ? "timeout" : c instanceof RedisException ? "redis" : "other";
        error(id, kind, String.valueOf(c.getMessage()));
    }

    private static String str(Object o) {
        return o == null ? "" : o.toString();
    }

    private static long num(Object o) {
        if (o instanceof Number) {
            return ((Number) o).longValue();
        }
        if (o instanceof String && !((String) o).isEmpty()) {
            return Long.parseLong((String) o);
        }
        return 0;
    }
}
