package thalabus.procedures;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The engine's settings as the procedures read them: the Python {@code Settings} defaults the
 * build wrote into the jar ({@code /settings.json}, one source of truth), overridden by a
 * caller's {@code settings} option (the Python engine passes its own), and sized to a
 * {@code limit} exactly as {@code thalabus_graph.plan.cost.sized} does.
 */
public final class EngineSettings {
    private static final String FILE = "/settings.json";
    private static final String RULES = "/settings_rules.json";

    private final Map<String, Object> values;

    private EngineSettings(Map<String, Object> values) {
        this.values = values;
    }

    /** The shipped defaults with {@code overrides} (Python field names) applied, each
     *  override of the default's kind (number, boolean, text), within the setting's range and
     *  one of its words where the Python {@code Settings} has them ({@code /settings_rules.json}). */
    public static EngineSettings of(Map<String, Object> overrides) {
        Map<String, Object> merged = new HashMap<>(Shipped.DEFAULTS);
        if (overrides != null) {
            for (Map.Entry<String, Object> e : overrides.entrySet()) {
                if (!merged.containsKey(e.getKey())) {
                    throw new IllegalArgumentException("thalabus.phrase: unknown setting '"
                            + e.getKey() + "'");
                }
                checked(e.getKey(), merged.get(e.getKey()), e.getValue());
                merged.put(e.getKey(), e.getValue());
            }
        }
        return new EngineSettings(merged);
    }

    @SuppressWarnings("unchecked")
    private static void checked(String name, Object standard, Object value) {
        for (Class<?> kind : List.of(Number.class, Boolean.class, String.class)) {
            if (kind.isInstance(standard) && !kind.isInstance(value)) {
                throw new IllegalArgumentException("thalabus.phrase: setting '" + name
                        + "' must be a " + kind.getSimpleName() + ", not " + value);
            }
        }
        Map<String, Object> rules = Shipped.RULES;
        Object range = ((Map<String, Object>) rules.get("ranges")).get(name);
        if (range instanceof List<?> r && value instanceof Number n
                && (n.doubleValue() < ((Number) r.get(0)).doubleValue()
                    || n.doubleValue() > ((Number) r.get(1)).doubleValue())) {
            throw new IllegalArgumentException("thalabus.phrase: setting '" + name + "' must be "
                    + "between " + r.get(0) + " and " + r.get(1) + ", not " + value);
        }
        Object words = ((Map<String, Object>) rules.get("choices")).get(name);
        if (words instanceof List<?> w && !w.contains(value)) {
            throw new IllegalArgumentException("thalabus.phrase: setting '" + name + "' must be "
                    + "one of " + w + ", not " + value);
        }
    }

    /** The jar's settings files, read once, when a phrase first needs them. */
    private static final class Shipped {
        static final Map<String, Object> DEFAULTS = readJson(FILE);
        static final Map<String, Object> RULES = readJson(EngineSettings.RULES);
    }

    /** A JSON object the build wrote into the jar ({@code file} from its root). */
    static Map<String, Object> readJson(String file) {
        try (InputStream in = EngineSettings.class.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException("the plugin jar lacks " + file);
            }
            return new ObjectMapper().readValue(in, new TypeReference<Map<String, Object>>() {});
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A number setting. */
    public double number(String name) {
        Object v = values.get(name);
        if (!(v instanceof Number n)) {
            throw new IllegalArgumentException("setting '" + name + "' is not a number: " + v);
        }
        return n.doubleValue();
    }

    /** A whole-number setting. */
    public int integer(String name) {
        return (int) Math.round(number(name));
    }

    /** A text setting. */
    public String text(String name) {
        Object v = values.get(name);
        return v == null ? "" : v.toString();
    }

    /** A boolean setting. */
    public boolean flag(String name) {
        return Boolean.TRUE.equals(values.get(name));
    }

    /** Every value (for a rule that reads several by name). */
    public Map<String, Object> asMap() {
        return values;
    }

    /**
     * The settings of a request that wants {@code limit} results (null: unchanged): every
     * {@code top_n_*} pool at most {@code ceil(limit x limit_pool_factor)}, the vector
     * index's least k and k factor at most {@code limit_min_k} and {@code limit_k_factor}.
     */
    public EngineSettings sized(Long limit) {
        if (limit == null) {
            return this;
        }
        if (limit < 1 || limit > integer("index_max_k")) {
            throw new IllegalArgumentException("limit must be between 1 and "
                    + integer("index_max_k") + " (index_max_k), got " + limit);
        }
        int pool = (int) Math.ceil(limit * number("limit_pool_factor"));
        Map<String, Object> changed = new HashMap<>(values);
        for (String name : values.keySet()) {
            if (name.startsWith("top_n_")) {
                changed.put(name, Math.min(integer(name), pool));
            }
        }
        changed.put("vector_min_k", Math.min(integer("vector_min_k"), integer("limit_min_k")));
        changed.put("vector_k_factor", Math.min(number("vector_k_factor"), number("limit_k_factor")));
        return new EngineSettings(changed);
    }

    /** {@code cost.unfiltered_k}: candidates asked of the index for an unfiltered search. */
    public int unfilteredK(int topN) {
        int k = Math.max((int) Math.ceil(topN * number("vector_k_factor")), integer("vector_min_k"));
        return Math.min(k, integer("index_max_k"));
    }

    /** Names of the settings a caller may override (for error messages and docs). */
    public List<String> names() {
        return List.copyOf(values.keySet());
    }
}
