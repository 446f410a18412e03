package thalabus.procedures.fusion;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Java form of {@code thalabus_graph.search.fusing.PhraseFusion}: the fusion of one
 * evaluation's phrases by {@code settings.fusion()}, with what each rule needs remembered per
 * phrase. The Python class reads the documents' languages from the graph itself; here the
 * caller puts them into {@link #languages} first (a document missing there has none).
 *
 * <p>language-slots is fitted once per phrase on its unrestricted candidates and applied to
 * every list of the phrase; convex, max and rrf fuse each list alone, semantic scores min-max
 * normalised over the phrase's remembered range (with {@code semanticScale}, their order takes
 * the phrase's semantic scores, {@link Fusion#rankedOnto}).
 */
public final class PhraseFusion {
    /** A phrase's semantic fragments and its text fragments. */
    public record Candidates(List<Fragment> semantic, List<Fragment> text) {}

    private final FusionSettings settings;
    /** Phrase to (lo, hi) of its unrestricted semantic search ({@code ranges}). */
    public final Map<String, double[]> ranges = new HashMap<>();
    /** Phrase to its unrestricted candidates, its fixed sample when one was read
     *  ({@code unrestricted}): the language-slots rule is fitted on them. */
    public final Map<String, Candidates> unrestricted = new HashMap<>();
    /** Phrase to its fitted language-slots rule ({@code fitted}). */
    public final Map<String, LanguageSlots> fitted = new HashMap<>();
    /** Document id to its stored language (null: none or unknown). */
    public final Map<String, String> languages = new HashMap<>();
    /** A text hit's text (that very string) to the phrase's words found in it, where the
     *  search found them already ({@link Fusion#sharedWords}); other texts are searched here. */
    public final Map<String, Set<String>> sharedWords = new java.util.IdentityHashMap<>();
    /** Phrase to the bottom of its semantic range read from its fixed sample ({@code lows}). */
    public final Map<String, Double> lows = new HashMap<>();
    /** Whether fused scores must lie on the semantic (index) scale ({@code semantic_scale}). */
    public boolean semanticScale;

    /** An empty fusion for these settings. */
    public PhraseFusion(FusionSettings settings) {
        this.settings = settings;
    }

    /** The Java form of {@code remember_range}: the phrase's semantic range from its
     *  unrestricted fragments, its bottom from {@link #lows} when the phrase has one. */
    public void rememberRange(String phrase, List<Fragment> fragments) {
        double lo = 0.0;
        double hi = 0.0;
        boolean first = true;
        for (Fragment f : fragments) {
            lo = first ? f.score() : Fusion.pyMin(lo, f.score());
            hi = first ? f.score() : Fusion.pyMax(hi, f.score());
            first = false;
        }
        ranges.put(phrase, new double[] {lows.getOrDefault(phrase, lo), hi});
    }

    /**
     * The Java form of {@code PhraseFusion.fuse}: a phrase's semantic and text fragments fused
     * by the settings' rule.
     *
     * @param restricted whether these hits are a filtered search
     * @param fit the phrase's unrestricted candidates searched for the language-slots rule
     *     (needed when these hits are restricted and {@link #unrestricted} lacks the phrase)
     */
    public List<Fragment> fuse(String phrase, List<Fragment> semantic, List<Fragment> text,
                               boolean restricted, Candidates fit) {
        String rule = settings.fusion();
        if (rule.equals("language-slots")) {
            return slots(phrase, semantic, text, restricted, fit).fuse(semantic, text);
        }
        List<Fragment> fused;
        if (rule.equals("rrf")) {
            fused = Fusion.fuseRrf(semantic, text, settings.rrfK());
        } else {
            double[] range = ranges.get(phrase);
            if (range == null) {
                throw new IllegalStateException("no semantic range remembered for the phrase");
            }
            fused = rule.equals("max") ? Fusion.fuseMax(semantic, text, range[0], range[1])
                    : Fusion.fuseConvex(semantic, text, range[0], range[1],
                            settings.fusionTextWeight());
        }
        return semanticScale ? Fusion.rankedOnto(fused, semantic) : fused;
    }

    /** The phrase's language-slots rule, fitted on its unrestricted candidates (or on the
     *  {@code fit} searched for a restricted phrase, or on these hits) at first use. */
    private LanguageSlots slots(String phrase, List<Fragment> semantic, List<Fragment> text,
                                boolean restricted, Candidates fit) {
        LanguageSlots rule = fitted.get(phrase);
        if (rule != null) {
            return rule;
        }
        Candidates sample = unrestricted.get(phrase);
        if (sample == null && restricted) {
            if (fit == null) {
                throw new IllegalStateException("a restricted phrase needs its fit searched");
            }
            sample = fit;
        }
        if (sample == null) {
            sample = new Candidates(semantic, text);
        }
        Map<String, String> known = new HashMap<>();
        Set<String> documents = new HashSet<>();
        sample.semantic().forEach(f -> documents.add(f.documentid()));
        sample.text().forEach(f -> documents.add(f.documentid()));
        for (String d : documents) {
            known.put(d, languages.get(d));
        }
        rule = LanguageSlots.fit(phrase, sample.semantic(), sample.text(), known,
                settings.fusionTextWeight(), settings.fusionFullCoverage(), lows.get(phrase),
                sharedWords);
        fitted.put(phrase, rule);
        return rule;
    }
}
