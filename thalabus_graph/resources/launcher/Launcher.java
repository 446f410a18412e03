// Starts an embedded Neo4j Community DBMS with Bolt on loopback, for thalabus-graph.
//
// Usage: java -cp launcher.jar:<neo4j jars> Launcher HOME PORT [NEO4J_CONF]
//
// HOME holds data/ and logs/; NEO4J_CONF (optional) carries raw settings such as memory limits,
// so names that moved between Neo4j versions never need a Java constant. The class compiles
// against Neo4j 5.26 (Java 17) and 2025.x/2026.x (Java 21+): it only uses the public embedded
// API and settings whose constants exist in both lines. SIGTERM runs the shutdown hook, which
// shuts the DBMS down cleanly (store flushed, lock released). With -Dthalabus.parentPid=N the
// server also shuts down when process N ends, so a crashed test run leaves no JVM behind.
// With -Dthalabus.auth=stdin, auth is enabled and the first line of stdin is the password of the
// user neo4j: set through the system database before the ready line while the user still has
// its initial password (never in argv); kept as it is once set, so a restart with the same
// password works and a different one is refused by the server at login. With
// -Dthalabus.auth=on, auth is enabled and nothing is set (a store whose auth stays on).
// The store's own users decide too: a store with a password user (any user but the initial
// neo4j, or neo4j once its password was set) is an auth store. With -Dthalabus.auth=probe the
// DBMS starts with auth on and restarts in this JVM with auth off only when no user has a
// password; without the property (auth off) a store found to have one restarts with auth on.
// The line "THALABUS-NEO4J-AUTH on|off" before the ready line says which way the server runs.
// neo4j.lock is opened without following a symbolic link.
// The process holds an exclusive lock on HOME/neo4j.lock for its whole life: that lock, not a
// pid file, is how thalabus-graph finds the server of a data dir (fcntl F_GETLK names its pid).

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.logging.Level;
import org.neo4j.logging.log4j.Log4jLogProvider;

public final class Launcher {
    /** Printed on stdout once Bolt listens and the default database is up. */
    static final String READY = "THALABUS-NEO4J-READY";

    /** Held until the JVM exits; the OS drops it with the process, even on SIGKILL. */
    private static FileLock ownership;

    private Launcher() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 2 || args.length > 3) {
            System.err.println("usage: Launcher HOME PORT [NEO4J_CONF]");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        Files.createDirectories(home);
        FileChannel lockChannel = FileChannel.open(home.resolve("neo4j.lock"),
                StandardOpenOption.CREATE, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        ownership = lockChannel.tryLock();
        if (ownership == null) {
            System.err.println("another launcher already runs on " + home);
            System.exit(3);
        }
        String authMode = System.getProperty("thalabus.auth");
        boolean auth = authMode != null && !authMode.isBlank() && !authMode.equals("off");
        String password = readPassword(authMode);
        Path conf = args.length == 3 ? Path.of(args[2]) : null;

        watchParent(System.getProperty("thalabus.parentPid"));
        long started = System.nanoTime();
        AtomicReference<DatabaseManagementService> current = new AtomicReference<>();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("THALABUS-NEO4J-STOPPING");
            System.out.flush();
            try {
                DatabaseManagementService running = current.getAndSet(null);
                if (running != null) {
                    running.shutdown();
                }
            } finally {
                System.out.println("THALABUS-NEO4J-STOPPED");
                System.out.flush();
                stopped.countDown();
            }
        }, "thalabus-neo4j-shutdown"));

        DatabaseManagementService dbms = build(home, port, conf, auth, current);
        if (password == null) {
            // The system database is up once build returns: the users decide before the
            // default database is awaited, so a server on the wrong side of auth answers for
            // as short a time as can be.
            boolean users = passwordUser(dbms);
            if (auth && users) {
                System.out.println("THALABUS-NEO4J auth enabled for user neo4j (store set up"
                        + " with auth)");
            } else if (users || (auth && authMode.equals("probe"))) {
                auth = !auth;
                System.out.println(auth
                        ? "THALABUS-NEO4J a user of this store has a password: auth stays on"
                        : "THALABUS-NEO4J no user of this store has a password: auth off");
                System.out.flush();
                current.set(null);
                dbms.shutdown();
                dbms = build(home, port, conf, auth, current);
            } else if (auth) {
                System.out.println("THALABUS-NEO4J auth enabled for user neo4j (store set up"
                        + " with auth)");
            }
        }
        awaitDefault(dbms);
        if (password != null) {
            // Embedded transactions run with full rights; the system database holds the users.
            try {
                if (initialPassword(dbms)) {
                    dbms.database("system").executeTransactionally(
                            "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
                            Map.of("password", password));
                } else {
                    System.out.println("THALABUS-NEO4J the password of user neo4j was set before;"
                            + " kept");
                }
            } catch (Throwable e) {
                System.out.println("THALABUS-NEO4J could not set the password of user neo4j: "
                        + e.getMessage());
                System.out.flush();
                System.exit(1);  // the shutdown hook stops the DBMS cleanly
            }
            System.out.println("THALABUS-NEO4J auth enabled for user neo4j");
        }
        System.out.println("THALABUS-NEO4J-AUTH " + (auth ? "on" : "off"));
        long millis = (System.nanoTime() - started) / 1_000_000;
        System.out.println(READY + " bolt://127.0.0.1:" + port + " in " + millis + " ms");
        System.out.flush();
        stopped.await();
    }

    /** Builds the DBMS (its system database up), or exits on failure. */
    private static DatabaseManagementService build(Path home, int port, Path conf, boolean auth,
            AtomicReference<DatabaseManagementService> current) throws Exception {
        DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(home);
        if (conf != null) {
            builder.loadPropertiesFromFile(conf);
        }
        builder.setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(GraphDatabaseSettings.auth_enabled, auth)
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                .setUserLogProvider(new Log4jLogProvider(System.out, Level.INFO));
        DatabaseManagementService dbms;
        try {
            dbms = builder.build();
        } catch (Throwable e) {
            // Neo4j's non-daemon threads could otherwise keep a failed JVM alive.
            e.printStackTrace();
            System.out.flush();
            System.exit(1);
            return null;
        }
        current.set(dbms);
        return dbms;
    }

    /** Waits until the default database is up, or exits when it failed. */
    private static void awaitDefault(DatabaseManagementService dbms) {
        // Forces the default database up before we say we are ready. A database that failed
        // to start (disk full, a broken store) never comes up: its status message is printed
        // and the JVM exits, so the caller sees why at once instead of waiting out its timeout.
        while (!dbms.database("neo4j").isAvailable(1_000)) {
            String failure = failure(dbms);
            if (failure != null) {
                System.out.println("THALABUS-NEO4J-FAILED database neo4j could not start: "
                        + failure);
                System.out.flush();
                System.exit(1);  // the shutdown hook stops the DBMS cleanly
            }
            System.out.println("THALABUS-NEO4J waiting for database neo4j");
            System.out.flush();
        }
    }

    /** Why the default database failed to start, from its status; null while it may still. */
    private static String failure(DatabaseManagementService dbms) {
        try {
            return dbms.database("system").executeTransactionally(
                    "SHOW DATABASE neo4j YIELD currentStatus, statusMessage "
                            + "RETURN currentStatus, statusMessage",
                    Map.of(),
                    result -> {
                        if (!result.hasNext()) {
                            return null;
                        }
                        Map<String, Object> row = result.next();
                        Object status = row.get("currentStatus");
                        Object message = row.get("statusMessage");
                        boolean failed = status != null
                                && !"online".equals(status) && !"starting".equals(status)
                                && message != null && !message.toString().isBlank();
                        return failed ? status + ": " + message : null;
                    });
        } catch (Throwable e) {
            return null;  // the system database is not up yet either: keep waiting
        }
    }

    /** True when a user has a password someone set: any user but neo4j, or neo4j once its
     * initial password was changed. Such a store is an auth store. */
    private static boolean passwordUser(DatabaseManagementService dbms) {
        try {
            return dbms.database("system").executeTransactionally(
                    "SHOW USERS YIELD user, passwordChangeRequired WHERE user <> 'neo4j' "
                            + "OR NOT passwordChangeRequired RETURN count(*) AS n",
                    Map.of(),
                    result -> ((Number) result.next().get("n")).longValue() > 0);
        } catch (Throwable e) {
            System.out.println("THALABUS-NEO4J-FAILED could not read the users of the store: "
                    + e.getMessage());
            System.out.flush();
            System.exit(1);  // the shutdown hook stops the DBMS cleanly
            return true;
        }
    }

    /** True while user neo4j still has its initial password (it must change it first). */
    private static boolean initialPassword(DatabaseManagementService dbms) {
        return dbms.database("system").executeTransactionally(
                "SHOW USERS YIELD user, passwordChangeRequired "
                        + "WHERE user = 'neo4j' RETURN passwordChangeRequired",
                Map.of(),
                result -> !result.hasNext()
                        || Boolean.TRUE.equals(result.next().get("passwordChangeRequired")));
    }

    /** The password from stdin's first line when {@code mode} is "stdin"; else null. */
    private static String readPassword(String mode) throws Exception {
        if (mode == null || mode.isBlank() || mode.equals("on") || mode.equals("off")
                || mode.equals("probe")) {
            return null;
        }
        if (!mode.equals("stdin")) {
            System.err.println("thalabus.auth must be 'stdin', 'on', 'off' or 'probe', not " + mode);
            System.exit(2);
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line = in.readLine();
        if (line == null || line.isEmpty()) {
            System.err.println("thalabus.auth=stdin: no password on stdin");
            System.exit(2);
        }
        return line;
    }

    /** Exits (running the shutdown hook) once the given process is gone. */
    private static void watchParent(String pid) {
        if (pid == null || pid.isBlank()) {
            return;
        }
        long parent = Long.parseLong(pid.trim());
        Thread watcher = new Thread(() -> {
            while (ProcessHandle.of(parent).map(ProcessHandle::isAlive).orElse(false)) {
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    return;
                }
            }
            System.out.println("THALABUS-NEO4J parent process " + parent + " ended; shutting down");
            System.exit(0);
        }, "thalabus-parent-watch");
        watcher.setDaemon(true);
        watcher.start();
    }
}
