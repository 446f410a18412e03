package thalabus.procedures;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The engine's statements the plugin runs, as the build wrote them into the jar
 * ({@code cypher/<name>.cypher}, rendered by the Python package's statement library), read
 * once each; and the label of each fragment source.
 */
final class Statements {
    /** The node label of each fragment source ({@code plan.steps}' sources). */
    static final Map<String, String> LABELS = Map.of(
            "chapters", "Chapter", "paragraphs", "Paragraph", "summaries", "Summary",
            "questions", "Question", "keywords", "Keyword");
    private static final Map<String, String> READ = new ConcurrentHashMap<>();

    private Statements() {}

    /** The text of the jar's {@code cypher/<name>.cypher}. */
    static String text(String name) {
        return READ.computeIfAbsent(name, Statements::read);
    }

    private static String read(String name) {
        String path = "/cypher/" + name + ".cypher";
        try (InputStream in = Statements.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("the plugin jar lacks " + path.substring(1));
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
