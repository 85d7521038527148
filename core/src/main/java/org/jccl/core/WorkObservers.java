package org.jccl.core;

import java.util.Arrays;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The process's {@link WorkObserver}s, as an array replaced on every change, so the issue and completion paths read
 * one volatile field and allocate nothing; an empty array costs them one length check.
 */
final class WorkObservers {
    private static final Logger LOG = LoggerFactory.getLogger(WorkObservers.class);
    private static final WorkObserver[] NONE = new WorkObserver[0];
    private static volatile WorkObserver[] observers = NONE;

    private WorkObservers() {
    }

    static synchronized void add(WorkObserver observer) {
        WorkObserver[] now = observers;
        WorkObserver[] next = Arrays.copyOf(now, now.length + 1);
        next[now.length] = observer;
        observers = next;
    }

    static synchronized boolean remove(WorkObserver observer) {
        WorkObserver[] now = observers;
        for (int i = 0; i < now.length; i++) {
            if (now[i] == observer) {
                WorkObserver[] next = new WorkObserver[now.length - 1];
                System.arraycopy(now, 0, next, 0, i);
                System.arraycopy(now, i + 1, next, i, now.length - i - 1);
                observers = next;
                return true;
            }
        }
        return false;
    }

    static WorkObserver[] current() {
        return observers;
    }

    static void issued(WorkObserver[] to, Work work) {
        for (WorkObserver o : to) {
            try {
                o.issued(work);
            } catch (RuntimeException e) {
                LOG.warn("work observer {} failed on issue of {}", o, work.describe(), e);
            }
        }
    }

    static void completed(WorkObserver[] to, Work work, @Nullable Throwable error, long elapsedNanos) {
        for (WorkObserver o : to) {
            try {
                o.completed(work, error, elapsedNanos);
            } catch (RuntimeException e) {
                LOG.warn("work observer {} failed on completion of {}", o, work.describe(), e);
            }
        }
    }
}
