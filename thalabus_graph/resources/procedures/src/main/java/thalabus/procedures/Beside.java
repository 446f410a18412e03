package thalabus.procedures;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;

import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Transaction;
import org.neo4j.kernel.api.KernelTransaction;
import org.neo4j.kernel.api.txstate.TxStateHolder;
import org.neo4j.kernel.impl.coreapi.InternalTransaction;
import org.neo4j.kernel.internal.GraphDatabaseAPI;

/**
 * A read run beside the caller's: one phrase's searches are independent reads (the vector
 * index and the full-text index, the unrestricted and the restricted searches), so while the
 * caller's thread runs one, a second transaction on another core runs the other, and the
 * phrase waits for the slower instead of both. The calibrated background, which reads the
 * candidates' texts already read, is computed beside the fusion the same way.
 *
 * <p>The second transaction runs as the caller (its security context and client) on the same
 * database. It is used only when the caller's transaction holds no changes of its own, which
 * another transaction would not see; and only while one of the plugin's threads (as many as
 * the server's cores) is free, so a busy server runs each phrase's reads one after the other
 * on its own thread rather than queueing them. What the read yields must be plain values:
 * nodes belong to the transaction that read them.
 */
final class Beside {
    private static final ThreadPoolExecutor POOL = new ThreadPoolExecutor(0,
            Math.max(1, Runtime.getRuntime().availableProcessors()), 30, TimeUnit.SECONDS,
            new SynchronousQueue<>(), runnable -> {
                Thread thread = new Thread(runnable, "thalabus-beside");
                thread.setDaemon(true);
                return thread;
            });

    private final InternalTransaction caller;
    private final GraphDatabaseAPI db;

    private Beside(InternalTransaction caller, GraphDatabaseAPI db) {
        this.caller = caller;
        this.db = db;
    }

    /** Reads beside {@code tx}, or null when they cannot run there (the transaction holds
     *  changes, or it or the database is not the server's own kind). */
    static Beside of(Transaction tx, GraphDatabaseService db) {
        if (!(tx instanceof InternalTransaction internal) || !(db instanceof GraphDatabaseAPI api)) {
            return null;
        }
        KernelTransaction kernel = internal.kernelTransaction();
        if (kernel instanceof TxStateHolder state && state.hasTxStateWithChanges()) {
            return null;
        }
        return new Beside(internal, api);
    }

    /** A read or a computation under way on one of the plugin's threads ({@link #join}). */
    static final class Task<T> {
        private final Future<T> future;
        private final AtomicReference<InternalTransaction> running;

        private Task(Future<T> future, AtomicReference<InternalTransaction> running) {
            this.future = future;
            this.running = running;
        }

        /** The read's value; its failure rethrown as the caller's. */
        T join() {
            try {
                return future.get();
            } catch (InterruptedException e) {
                cancel();
                Thread.currentThread().interrupt();
                throw new IllegalStateException("thalabus: interrupted while a search ran", e);
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof RuntimeException runtime) {
                    throw runtime;
                }
                throw new IllegalStateException(cause);
            }
        }

        /** Ends the read's transaction, if any (the caller failed and will not join it). */
        void cancel() {
            InternalTransaction tx = running.get();
            if (tx != null) {
                tx.terminate();
            }
            future.cancel(false);
        }
    }

    /**
     * {@code mine} run on the caller's thread while {@code other} (null: none) runs on one of
     * the plugin's; {@code other} is ended when {@code mine} fails, since the caller will not
     * join it then.
     */
    static <U> U alongside(Task<?> other, Supplier<U> mine) {
        if (other == null) {
            return mine.get();
        }
        try {
            return mine.get();
        } catch (RuntimeException e) {
            other.cancel();
            throw e;
        }
    }

    /** {@code work} (reading nothing from the graph) started, or null when no thread is free
     *  (the caller then runs it itself). */
    <T> Task<T> compute(Supplier<T> work) {
        return submit(new AtomicReference<>(), work);
    }

    /** {@code read} started in a transaction of its own, or null when no thread is free (the
     *  caller then runs it itself). */
    <T> Task<T> start(Function<Transaction, T> read) {
        AtomicReference<InternalTransaction> running = new AtomicReference<>();
        return submit(running, () -> {
            try (InternalTransaction tx = db.beginTransaction(KernelTransaction.Type.EXPLICIT,
                    caller.securityContext(), caller.clientInfo())) {
                running.set(tx);
                return read.apply(tx);
            } finally {
                running.set(null);
            }
        });
    }

    /** {@code work} on a free thread of the pool (null: none free); {@code running} names the
     *  transaction it reads in while it has one. */
    private static <T> Task<T> submit(AtomicReference<InternalTransaction> running,
                                      Supplier<T> work) {
        CompletableFuture<T> out = new CompletableFuture<>();
        try {
            POOL.execute(() -> {
                try {
                    out.complete(work.get());
                } catch (Throwable e) {
                    out.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException busy) {
            return null;
        }
        return new Task<>(out, running);
    }
}
