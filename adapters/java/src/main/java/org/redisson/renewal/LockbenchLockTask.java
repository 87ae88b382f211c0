package org.redisson.renewal;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

import org.redisson.command.CommandAsyncExecutor;

/**
 * Redisson's lock watchdog task (LockTask) that says which locks it is
 * about to renew, right before it sends each renewal: the adapter turns
 * that into protocol v1's "renewing" notices. The renewal itself is
 * LockTask's, unchanged: per lock name, the watchdog renews the first
 * owner it holds (LockEntry.getFirstThreadId), with one script for a chunk
 * of names. In package org.redisson.renewal to override the
 * package-private renew; the adapter installs it in the client's
 * LockRenewalScheduler before the first lock (Redisson 4.7.0's internals).
 */
public final class LockbenchLockTask extends LockTask {
    /** One lock the watchdog is about to renew: its name and the owner. */
    public static final class Renewal {
        public final String name;
        public final long threadId;

        Renewal(String name, long threadId) {
            this.name = name;
            this.threadId = threadId;
        }
    }

    private final Consumer<List<Renewal>> listener;

    public LockbenchLockTask(long internalLockLeaseTime, CommandAsyncExecutor executor, int chunkSize,
                             Consumer<List<Renewal>> listener) {
        super(internalLockLeaseTime, executor, chunkSize);
        this.listener = listener;
    }

    @Override
    CompletionStage<Void> renew(Iterator<String> iter, int chunkSize) {
        List<String> names = new ArrayList<>();
        iter.forEachRemaining(names::add);
        List<Renewal> rs = new ArrayList<>(names.size());
        for (String n : names) {
            LockEntry e = name2entry.get(n);
            Long t = e == null ? null : e.getFirstThreadId();
            if (t != null) {
                rs.add(new Renewal(n, t));
            }
        }
        try {
            listener.accept(rs);
        } catch (RuntimeException ex) {
            // the notices are the adapter's; the renewal goes on
        }
        return super.renew(names.iterator(), chunkSize);
    }
}
