package thalabus.procedures.scoring;

import java.util.HashMap;
import java.util.Map;

/**
 * The settings the calibrated scale reads ({@code scale._factor}, {@code scale._cap} and
 * {@code Settings.min_score}): a multiplier and a cap per source, from the engine's
 * {@code score_factor_<source>} and {@code score_cap_<source>} fields (chapters, paragraphs,
 * summaries, questions; 1.0 for a source without one, as Python's {@code getattr} default
 * reads it), and the floor {@code min_score}.
 */
public record ScaleSettings(Map<String, Double> factors, Map<String, Double> caps,
                            double minScore) {
    /** The engine's defaults: factors and caps 1.0, {@code min_score} 0.0026. */
    public static final ScaleSettings DEFAULTS = new ScaleSettings(Map.of(), Map.of(), 0.0026);

    public ScaleSettings {
        factors = Map.copyOf(factors);
        caps = Map.copyOf(caps);
    }

    /**
     * The settings in the engine's field names: {@code score_factor_<source>},
     * {@code score_cap_<source>} and {@code min_score} (absent: the defaults); other keys are
     * ignored.
     */
    public static ScaleSettings of(Map<String, ? extends Number> fields) {
        Map<String, Double> factors = new HashMap<>();
        Map<String, Double> caps = new HashMap<>();
        fields.forEach((key, value) -> {
            if (key.startsWith("score_factor_")) {
                factors.put(key.substring("score_factor_".length()), value.doubleValue());
            } else if (key.startsWith("score_cap_")) {
                caps.put(key.substring("score_cap_".length()), value.doubleValue());
            }
        });
        Number floor = fields.get("min_score");
        return new ScaleSettings(factors, caps, floor == null ? DEFAULTS.minScore : floor.doubleValue());
    }

    /** The multiplier on a source's calibrated scores (1.0 without one). */
    public double factor(String source) {
        return factors.getOrDefault(source, 1.0);
    }

    /** The cap on a source's calibrated scores after the factor (1.0 without one). */
    public double cap(String source) {
        return caps.getOrDefault(source, 1.0);
    }
}
