package thalabus.procedures;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import thalabus.procedures.scoring.Calibration;

/**
 * The {@code options} map of {@code thalabus.phrase}, checked: an unknown key or a value of
 * the wrong type is an error naming it, never ignored.
 */
record Options(Long limit, String language, List<String[]> indexes, Boolean held,
               Boolean withText, String calibrationName, Map<String, Object> settings,
               Filter filter, List<RestrictedSearch.Planned> searches) {
    private static final Set<String> KEYS = Set.of("limit", "language", "text_indexes", "held",
            "with_text", "calibration", "settings", "documentids", "filter", "searches");

    @SuppressWarnings("unchecked")
    static Options of(Map<String, Object> options) {
        Map<String, Object> o = options == null ? Map.of() : options;
        for (String key : o.keySet()) {
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException("thalabus.phrase: unknown option '" + key
                        + "' (known: " + String.join(", ", new java.util.TreeSet<>(KEYS)) + ")");
            }
        }
        List<String[]> indexes = textIndexes(o.get("text_indexes"));
        return new Options((Long) typed(o, "limit", Long.class), (String) typed(o, "language", String.class),
                indexes, (Boolean) typed(o, "held", Boolean.class),
                (Boolean) typed(o, "with_text", Boolean.class),
                (String) typed(o, "calibration", String.class),
                (Map<String, Object>) typed(o, "settings", Map.class),
                Filter.of(o.get("documentids"), o.get("filter")),
                searches((List<Object>) typed(o, "searches", List.class)));
    }

    /** The {@code searches} option: the engine's plan for a filtered phrase, one
     *  {kind, source, index, k, top_n, walked} map per search (null: none given). */
    private static List<RestrictedSearch.Planned> searches(List<Object> given) {
        if (given == null) {
            return null;
        }
        List<RestrictedSearch.Planned> out = new ArrayList<>();
        for (Object item : given) {
            if (!(item instanceof Map<?, ?> m)) {
                throw new IllegalArgumentException(
                        "thalabus.phrase: option 'searches' must list maps, not " + item);
            }
            Object index = m.get("index");
            out.add(checked(new RestrictedSearch.Planned(String.valueOf(m.get("kind")),
                    String.valueOf(m.get("source")), index == null ? null : index.toString(),
                    number(m, "k", 0), number(m, "top_n", 0), real(m, "walked"))));
            if (out.size() > MAX_SEARCHES) {
                throw new IllegalArgumentException("thalabus.phrase: option 'searches' lists "
                        + "more than " + MAX_SEARCHES + " searches (one per source and kind)");
            }
        }
        return out;
    }

    /** Searches a plan can hold: each vector source once, each full-text source once. */
    private static final int MAX_SEARCHES = 16;

    /** {@code s} when the engine's plan could have made it: a known kind on a source of that
     *  kind, a full-text index of its source, and sizes of at least 0 (1 for an index's k). */
    private static RestrictedSearch.Planned checked(RestrictedSearch.Planned s) {
        boolean vector = s.kind().equals("exact") || s.kind().equals("index");
        boolean text = s.kind().equals("text") || s.kind().equals("candidates");
        String[][] sources = vector ? PhraseSearch.VECTOR_SOURCES : PhraseSearch.TEXT_SOURCES;
        String base = null;
        for (String[] src : sources) {
            base = src[0].equals(s.source()) ? src[1] : base;
        }
        String problem = !vector && !text ? "kind '" + s.kind() + "' is none of exact, index, "
                + "text, candidates"
                : base == null ? "source '" + s.source() + "' is no " + (vector ? "vector"
                        : "full-text") + " source (" + names(sources) + ")"
                : text && (s.index() == null || !Languages.isFullTextIndex(base, s.index()))
                        ? "index '" + s.index() + "' is not a full-text index of " + s.source()
                        + " (" + base + " or " + base + "_<language>)"
                : s.kind().equals("index") && s.k() < 1 ? "'k' must be at least 1"
                : s.k() < 0 || s.topN() < 0 ? "'k' and 'top_n' must be at least 0"
                : !(s.walked() >= 0 && Double.isFinite(s.walked())) ? "'walked' must be a "
                        + "finite number of at least 0"
                : null;
        if (problem != null) {
            throw new IllegalArgumentException("thalabus.phrase: option 'searches': " + problem);
        }
        return s;
    }

    private static String names(String[][] sources) {
        List<String> out = new ArrayList<>();
        for (String[] src : sources) {
            out.add(src[0]);
        }
        return String.join(", ", out);
    }

    private static double real(Map<?, ?> m, String key) {
        Object v = m.get(key);
        if (v != null && !(v instanceof Number)) {
            throw new IllegalArgumentException("thalabus.phrase: a search's '" + key
                    + "' must be a number, not " + v);
        }
        return v == null ? 0.0 : ((Number) v).doubleValue();
    }

    private static long number(Map<?, ?> m, String key, long absent) {
        Object v = m.get(key);
        if (v == null) {
            return absent;
        }
        if (!(v instanceof Number n)) {
            throw new IllegalArgumentException("thalabus.phrase: a search's '" + key
                    + "' must be a number, not " + v);
        }
        return n.longValue();
    }

    private static Object typed(Map<String, Object> o, String key, Class<?> type) {
        Object v = o.get(key);
        if (v != null && !type.isInstance(v)) {
            throw new IllegalArgumentException("thalabus.phrase: option '" + key + "' must be a "
                    + type.getSimpleName() + ", not " + v);
        }
        return v;
    }

    /** The {@code text_indexes} option: [source, index] pairs of the language-neutral
     *  sources' full-text indexes (null: not given). */
    private static List<String[]> textIndexes(Object given) {
        if (given == null) {
            return null;
        }
        Map<String, String> bases = new java.util.TreeMap<>();
        for (String[] src : PhraseSearch.TEXT_SOURCES) {
            bases.put(src[0], src[1]);
        }
        List<String[]> out = new ArrayList<>();
        for (Object pair : given instanceof List<?> list ? list : List.of(given)) {
            if (!(pair instanceof List<?> p) || p.size() != 2 || !(p.get(0) instanceof String source)
                    || !(p.get(1) instanceof String index) || !bases.containsKey(source)) {
                throw new IllegalArgumentException("thalabus.phrase: option 'text_indexes' is a "
                        + "list of [source, index] pairs, the source one of " + bases.keySet()
                        + ", e.g. [['chapters', 'chapters_fulltext_english']]; got " + pair);
            }
            if (!Languages.isFullTextIndex(bases.get(source), index)) {
                throw new IllegalArgumentException("thalabus.phrase: option 'text_indexes': '"
                        + index + "' is not a full-text index of " + source + " (" + bases.get(source)
                        + " or " + bases.get(source) + "_<language>, e.g. _english)");
            }
            out.add(new String[] {source, index});
        }
        return out;
    }

    /** The full-text (source, index) pairs: given, else the language's, else the neutral ones. */
    List<String[]> textIndexes() {
        if (indexes != null) {
            return indexes;
        }
        List<String[]> out = new ArrayList<>();
        for (String[] src : PhraseSearch.TEXT_SOURCES) {
            out.add(language == null ? src : new String[] {src[0],
                    src[1] + "_" + Languages.name(language)});
        }
        return out;
    }

    /** Whether the phrase runs its full-text search ({@code plan.searches}' rule). */
    boolean withText(String text, EngineSettings settings) {
        if (withText != null) {
            return withText;
        }
        if (settings.flag("hybrid_all_queries")) {
            return true;
        }
        return text.trim().split("(?U)\\s+").length <= settings.integer("short_query_max_words");
    }

    /** The calibration: the named model's shipped one, "none" for none, else the settings'
     *  embedder model's. */
    Calibration calibration(EngineSettings settings) {
        String name = calibrationName != null ? calibrationName : settings.text("embedder_model");
        if (name.equals("none")) {
            return null;
        }
        Calibration shipped = Calibration.shipped(name);
        if (shipped == null && calibrationName != null) {
            throw new IllegalArgumentException("thalabus.phrase: option 'calibration': no "
                    + "calibration is shipped for model '" + name + "'; name a shipped model "
                    + "(leave it out for the embedder model's) or 'none' for the index scale");
        }
        return shipped;
    }
}
