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

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

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

    private Launcher() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 2 || args.length > 3) {
            System.err.println("usage: Launcher HOME PORT [NEO4J_CONF]");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        Files.createDirectories(home);

        DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(home);
        if (args.length == 3) {
            builder.loadPropertiesFromFile(Path.of(args[2]));
        }
        builder.setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                .setUserLogProvider(new Log4jLogProvider(System.out, Level.INFO));

        watchParent(System.getProperty("thalabus.parentPid"));
        long started = System.nanoTime();
        DatabaseManagementService dbms;
        try {
            dbms = builder.build();
        } catch (Throwable e) {
            // Neo4j's non-daemon threads could otherwise keep a failed JVM alive.
            e.printStackTrace();
            System.out.flush();
            System.exit(1);
            return;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("THALABUS-NEO4J-STOPPING");
            System.out.flush();
            try {
                dbms.shutdown();
            } finally {
                System.out.println("THALABUS-NEO4J-STOPPED");
                System.out.flush();
                stopped.countDown();
            }
        }, "thalabus-neo4j-shutdown"));

        // Forces the default database up before we say we are ready.
        // The caller's own timeout bounds this (a failing store logs why and never comes up).
        while (!dbms.database("neo4j").isAvailable(1_000)) {
            System.out.println("THALABUS-NEO4J waiting for database neo4j");
            System.out.flush();
        }
        long millis = (System.nanoTime() - started) / 1_000_000;
        System.out.println(READY + " bolt://127.0.0.1:" + port + " in " + millis + " ms");
        System.out.flush();
        stopped.await();
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
