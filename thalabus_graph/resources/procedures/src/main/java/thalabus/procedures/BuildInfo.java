package thalabus.procedures;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/** What the build wrote into the jar: {@code thalabus-procedures.properties}. */
final class BuildInfo {
    private static final String FILE = "/thalabus-procedures.properties";

    private BuildInfo() {}

    /** The engine version (with the fingerprint of the rule sources) the jar was built from. */
    static String version() {
        try (InputStream in = BuildInfo.class.getResourceAsStream(FILE)) {
            if (in == null) {
                return "unknown";
            }
            Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("version", "unknown");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
