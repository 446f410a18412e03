package thalabus.procedures;

import java.util.Map;

/** The languages with a full-text analyzer ({@code thalabus_graph.languages.LANGUAGES}, which
 *  the build writes into the jar as {@code /languages.json}): ISO 639-1 code to analyzer name. */
final class Languages {
    private Languages() {}

    /** The analyzer name of a language code, which names its per-language indexes. */
    static String name(String code) {
        if (!(all().get(code) instanceof String name)) {
            throw new IllegalArgumentException("thalabus.phrase: no full-text analyzer for the "
                    + "language '" + code + "'");
        }
        return name;
    }

    /** Whether {@code index} is one of the full-text indexes of {@code base} the engine's
     *  migrations create: the language-neutral one or a language's ({@code base_<analyzer>}). */
    static boolean isFullTextIndex(String base, String index) {
        return index.equals(base) || (index.startsWith(base + "_")
                && all().containsValue(index.substring(base.length() + 1)));
    }

    private static Map<String, Object> all() {
        return Shipped.LANGUAGES;
    }

    /** The jar's languages file, read once, when a phrase first needs it. */
    private static final class Shipped {
        static final Map<String, Object> LANGUAGES = EngineSettings.readJson("/languages.json");
    }
}
