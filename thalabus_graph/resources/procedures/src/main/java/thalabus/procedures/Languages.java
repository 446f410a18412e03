package thalabus.procedures;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;

/** The languages with a full-text analyzer ({@code thalabus_graph.languages.LANGUAGES}, which
 *  the build writes into the jar as {@code /languages.json}): ISO 639-1 code to analyzer name. */
final class Languages {
    private static volatile Map<String, String> known;

    private Languages() {}

    /** The analyzer name of a language code, which names its per-language indexes. */
    static String name(String code) {
        String name = all().get(code);
        if (name == null) {
            throw new IllegalArgumentException("thalabus.phrase: no full-text analyzer for the "
                    + "language '" + code + "'");
        }
        return name;
    }

    /** Whether {@code index} is one of the full-text indexes of {@code base} the engine's
     *  migrations create: the language-neutral one or a language's ({@code base_<analyzer>}). */
    static boolean indexOf(String base, String index) {
        return index.equals(base) || (index.startsWith(base + "_")
                && all().containsValue(index.substring(base.length() + 1)));
    }

    private static Map<String, String> all() {
        Map<String, String> found = known;
        if (found == null) {
            try (InputStream in = Languages.class.getResourceAsStream("/languages.json")) {
                if (in == null) {
                    throw new IllegalStateException("the plugin jar lacks languages.json");
                }
                found = new ObjectMapper().readValue(in, new TypeReference<Map<String, String>>() {});
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            known = found;
        }
        return found;
    }
}
