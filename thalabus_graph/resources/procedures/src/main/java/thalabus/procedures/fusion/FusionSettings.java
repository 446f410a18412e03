package thalabus.procedures.fusion;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The tunables of {@code thalabus_graph.settings.Settings} the fusion and the hits' conversion
 * read, with the same names (in {@link #fromMap}) and the same defaults.
 *
 * @param fusion the rule: {@code language-slots}, {@code convex}, {@code max} or {@code rrf}
 * @param fusionTextWeight {@code fusion_text_weight}: the text evidence's weight (0.45)
 * @param fusionFullCoverage {@code fusion_full_coverage}: the weighted word coverage at which
 *     text evidence counts whole (0.5; 0 counts every hit whole)
 * @param rrfK {@code rrf_k}: k of reciprocal rank fusion (60)
 * @param topNText {@code top_n_text}: full-text hits kept per source (200)
 * @param minScore {@code min_score}: semantic hits below it drop when no calibration applies
 *     (0.10)
 * @param calibrated whether a calibration applies ({@code scale.calibration_of(settings)} is
 *     not None; true for the default embedder, whose calibration ships): semantic hits then stay
 *     on the index scale, factor, cap and {@code min_score} acting after the fusion
 * @param scoreFactors {@code score_factor_<source>} by vector source (1.0 each)
 * @param scoreCaps {@code score_cap_<source>} by vector source (1.0 each)
 */
public record FusionSettings(String fusion, double fusionTextWeight, double fusionFullCoverage,
                             int rrfK, int topNText, double minScore, boolean calibrated,
                             Map<String, Double> scoreFactors, Map<String, Double> scoreCaps) {
    /** The values {@code fusion} may take ({@code settings.FUSION_RULES}). */
    public static final List<String> RULES = List.of("language-slots", "convex", "max", "rrf");
    /** The vector sources ({@code plan.steps.VECTOR_SOURCES}' names). */
    public static final List<String> VECTOR_SOURCES =
            List.of("chapters", "paragraphs", "summaries", "questions");
    /** The full-text sources ({@code plan.steps.TEXT_SOURCES}' names). */
    public static final List<String> TEXT_SOURCES = List.of("chapters", "keywords");

    /** Checks the rule's name and copies the maps. */
    public FusionSettings {
        if (!RULES.contains(fusion)) {
            throw new IllegalArgumentException("fusion must be one of "
                    + String.join(", ", RULES) + ", not '" + fusion + "'");
        }
        scoreFactors = Map.copyOf(scoreFactors);
        scoreCaps = Map.copyOf(scoreCaps);
    }

    /** The engine's defaults. */
    public static FusionSettings defaults() {
        return fromMap(Map.of());
    }

    /**
     * Settings from a map keyed by the Python names ({@code fusion}, {@code fusion_text_weight},
     * {@code fusion_full_coverage}, {@code rrf_k}, {@code top_n_text}, {@code min_score},
     * {@code calibrated}, {@code score_factor_<source>}, {@code score_cap_<source>}); a missing
     * key keeps its default, an unknown one is ignored.
     */
    public static FusionSettings fromMap(Map<String, ?> values) {
        Map<String, Double> factors = new HashMap<>();
        Map<String, Double> caps = new HashMap<>();
        for (String source : VECTOR_SOURCES) {
            factors.put(source, number(values, "score_factor_" + source, 1.0));
            caps.put(source, number(values, "score_cap_" + source, 1.0));
        }
        Object rule = values.get("fusion");
        Object calibrated = values.get("calibrated");
        return new FusionSettings(rule == null ? "language-slots" : rule.toString(),
                number(values, "fusion_text_weight", 0.45),
                number(values, "fusion_full_coverage", 0.5),
                (int) number(values, "rrf_k", 60), (int) number(values, "top_n_text", 200),
                number(values, "min_score", 0.0026),
                calibrated == null || Boolean.TRUE.equals(calibrated), factors, caps);
    }

    private static double number(Map<String, ?> values, String key, double otherwise) {
        Object v = values.get(key);
        return v == null ? otherwise : ((Number) v).doubleValue();
    }

    /** {@code score_factor_<source>} (1.0 for a source without one). */
    public double scoreFactor(String source) {
        return scoreFactors.getOrDefault(source, 1.0);
    }

    /** {@code score_cap_<source>} (1.0 for a source without one). */
    public double scoreCap(String source) {
        return scoreCaps.getOrDefault(source, 1.0);
    }
}
