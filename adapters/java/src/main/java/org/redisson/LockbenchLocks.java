package org.redisson;

import java.lang.reflect.Field;

import org.redisson.command.CommandAsyncExecutor;

/**
 * Redisson's lock classes with their companion names moved under the lock's
 * own key, so that every key (and channel) a run writes starts with
 * lockbench's prefix (docs/external-locks.md, "prefix").
 *
 * <p>Redisson names a lock's companions by putting a word in front of the
 * lock's name (RedissonObject.prefixName, e.g.
 * {@code redisson_lock_queue:{NAME}}) or the name in braces in front
 * (suffixName, {@code {NAME}:timeout}), and Config's NameMapper maps only
 * NAME, so no setting puts them under a prefix. These subclasses live in
 * package org.redisson to override the package-private name methods, and
 * set the final name fields that the constructors computed, to
 * {@code NAME:<Redisson's word>}: the Lua scripts, the lock key, its hash
 * fields and every algorithm are Redisson's, unchanged. The names moved:
 * <ul>
 * <li>every lock's unlock latch {@code redisson_unlock_latch:{NAME}:REQ}
 *     (set for a few seconds by each unlock) and pub/sub channel
 *     {@code redisson_lock__channel:{NAME}};
 * <li>the fair lock's queue and timeout set
 *     {@code redisson_lock_queue:{NAME}}, {@code redisson_lock_timeout:{NAME}};
 * <li>the fenced lock's counter {@code redisson_lock_token:{NAME}};
 * <li>the read-write lock's channel {@code redisson_rwlock:{NAME}} and
 *     per-reader timeout keys {@code {NAME}:FIELD:rwlock_timeout:N};
 * <li>the permit-expirable semaphore's timeout zset {@code {NAME}:timeout}
 *     and channel {@code redisson_sc:{NAME}}.
 * </ul>
 * Written against Redisson 4.7.0; a Redisson that renames these members
 * fails to compile here (or, for the fields, at the first lock: "no field").
 */
public final class LockbenchLocks {
    private LockbenchLocks() {
    }

    /** The companion {@code what} of the object named raw: raw + ":" + what. */
    static String under(String raw, String what) {
        return raw + ":" + what;
    }

    static void set(Class<?> c, Object o, String field, Object v) {
        try {
            Field f = c.getDeclaredField(field);
            f.setAccessible(true);
            f.set(o, v);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Redisson " + c.getSimpleName() + "." + field + ": " + e, e);
        }
    }

    /** A lock lockbench can hold: its hash field, and abandon (stop renewing, do not unlock). */
    public interface Held {
        /** The hash field Redisson stores for the owner threadId: {@code <redisson id>:<threadId>}. */
        String field(long threadId);

        /** Stops the watchdog's renewal of threadId's hold without unlocking (a crashed holder). */
        void abandon(long threadId);
    }

    /** RLock (RedissonLock). */
    public static final class Lock extends RedissonLock implements Held {
        public Lock(CommandAsyncExecutor ce, String name) {
            super(ce, name);
        }

        @Override
        String getChannelName() {
            return under(getRawName(), "redisson_lock__channel");
        }

        @Override
        String getUnlockLatchName(String requestId) {
            return under(getRawName(), "redisson_unlock_latch:" + requestId);
        }

        @Override
        public String field(long threadId) {
            return getLockName(threadId);
        }

        @Override
        public void abandon(long threadId) {
            cancelExpirationRenewal(threadId, null);
        }
    }

    /** RFairLock (RedissonFairLock). */
    public static final class FairLock extends RedissonFairLock implements Held {
        public FairLock(CommandAsyncExecutor ce, String name) {
            super(ce, name);
            set(RedissonFairLock.class, this, "threadsQueueName", under(getRawName(), "redisson_lock_queue"));
            set(RedissonFairLock.class, this, "timeoutSetName", under(getRawName(), "redisson_lock_timeout"));
        }

        @Override
        String getChannelName() {
            return under(getRawName(), "redisson_lock__channel");
        }

        @Override
        String getUnlockLatchName(String requestId) {
            return under(getRawName(), "redisson_unlock_latch:" + requestId);
        }

        @Override
        public String field(long threadId) {
            return getLockName(threadId);
        }

        @Override
        public void abandon(long threadId) {
            cancelExpirationRenewal(threadId, null);
        }
    }

    /** RFencedLock (RedissonFencedLock). */
    public static final class FencedLock extends RedissonFencedLock implements Held {
        public FencedLock(CommandAsyncExecutor ce, String name) {
            super(ce, name);
            set(RedissonFencedLock.class, this, "tokenName", under(getRawName(), "redisson_lock_token"));
        }

        @Override
        String getChannelName() {
            return under(getRawName(), "redisson_lock__channel");
        }

        @Override
        String getUnlockLatchName(String requestId) {
            return under(getRawName(), "redisson_unlock_latch:" + requestId);
        }

        @Override
        public String field(long threadId) {
            return getLockName(threadId);
        }

        @Override
        public void abandon(long threadId) {
            cancelExpirationRenewal(threadId, null);
        }
    }

    /** RReadWriteLock's read side (RedissonReadLock). */
    public static final class ReadLock extends RedissonReadLock implements Held {
        public ReadLock(CommandAsyncExecutor ce, String name) {
            super(ce, name);
        }

        @Override
        String getChannelName() {
            return under(getRawName(), "redisson_rwlock");
        }

        @Override
        String getReadWriteTimeoutNamePrefix(long threadId) {
            // Redisson: {NAME}:FIELD:rwlock_timeout; getKeyPrefix splits at ":FIELD" and gets NAME back.
            return under(getRawName(), getLockName(threadId) + ":rwlock_timeout");
        }

        @Override
        String getUnlockLatchName(String requestId) {
            return under(getRawName(), "redisson_unlock_latch:" + requestId);
        }

        @Override
        public String field(long threadId) {
            return getLockName(threadId);
        }

        @Override
        public void abandon(long threadId) {
            cancelExpirationRenewal(threadId, null);
        }
    }

    /** RReadWriteLock's write side (RedissonWriteLock); its hash field ends in ":write". */
    public static final class WriteLock extends RedissonWriteLock implements Held {
        public WriteLock(CommandAsyncExecutor ce, String name) {
            super(ce, name);
        }

        @Override
        String getChannelName() {
            return under(getRawName(), "redisson_rwlock");
        }

        @Override
        String getUnlockLatchName(String requestId) {
            return under(getRawName(), "redisson_unlock_latch:" + requestId);
        }

        @Override
        public String field(long threadId) {
            return getLockName(threadId);
        }

        @Override
        public void abandon(long threadId) {
            cancelExpirationRenewal(threadId, null);
        }
    }

    /** RPermitExpirableSemaphore (RedissonPermitExpirableSemaphore). */
    public static final class Semaphore extends RedissonPermitExpirableSemaphore {
        public Semaphore(CommandAsyncExecutor ce, String name) {
            super(ce, name);
            set(RedissonPermitExpirableSemaphore.class, this, "timeoutName", under(getRawName(), "timeout"));
            set(RedissonPermitExpirableSemaphore.class, this, "channelName", under(getRawName(), "redisson_sc"));
        }
    }
}
