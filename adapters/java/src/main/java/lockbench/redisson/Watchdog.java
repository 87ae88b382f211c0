package lockbench.redisson;

import java.lang.reflect.Field;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.redisson.renewal.LockEntry;
import org.redisson.renewal.LockTask;
import org.redisson.renewal.LockRenewalScheduler;

/**
 * Reads what Redisson's lock watchdog (org.redisson.renewal.LockTask)
 * renews. The watchdog keeps one entry per lock name with the owners it
 * renews; when its renewal script finds an owner's hash field gone it
 * drops that owner (RenewalTask.cancelExpirationRenewal) and only stops
 * renewing: Redisson offers no listener for it. The adapter polls this
 * table to send "lost" for a lease the watchdog gave up on. The fields are
 * Redisson 4.7.0's internals (LockRenewalScheduler.reference,
 * RenewalTask.name2entry), read by reflection. install puts the adapter's
 * own LockTask (LockbenchLockTask, which announces each renewal) in the
 * scheduler.
 */
final class Watchdog {
    private final AtomicReference<?> task;
    private final Field name2entry;

    Watchdog(LockRenewalScheduler scheduler) {
        try {
            Field ref = LockRenewalScheduler.class.getDeclaredField("reference");
            ref.setAccessible(true);
            this.task = (AtomicReference<?>) ref.get(scheduler);
            this.name2entry = Class.forName("org.redisson.renewal.RenewalTask").getDeclaredField("name2entry");
            name2entry.setAccessible(true);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Redisson's watchdog table (LockRenewalScheduler.reference,"
                    + " RenewalTask.name2entry) not found: " + e, e);
        }
    }

    /**
     * Makes t the scheduler's lock task (before the first lock: the
     * scheduler creates its own only when it has none).
     */
    @SuppressWarnings("unchecked")
    void install(LockTask t) {
        if (!((AtomicReference<LockTask>) task).compareAndSet(null, t)) {
            throw new IllegalStateException("Redisson's watchdog task was already created");
        }
    }

    /** Whether the watchdog still renews name for owner threadId. */
    boolean renewing(String name, long threadId) {
        Object t = task.get();
        if (t == null) {
            return false;
        }
        try {
            Map<?, ?> m = (Map<?, ?>) name2entry.get(t);
            Object e = m.get(name);
            return e instanceof LockEntry && ((LockEntry) e).getLockName(threadId) != null;
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }
}
