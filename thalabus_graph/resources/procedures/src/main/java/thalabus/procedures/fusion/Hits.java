package thalabus.procedures.fusion;

import java.util.ArrayList;
import java.util.List;

/**
 * The Java form of {@code thalabus_graph/search/hits.py}'s conversions: a search's hits as the
 * fragments the fusion takes.
 */
public final class Hits {
    private Hits() {}

    /** The Java form of {@code hits.Hit}: one search hit (text may be null). */
    public record Hit(String fragmentid, String documentid, String text, double score) {}

    /**
     * The Java form of {@code semantic_fragments}: one vector source's hits as fragments
     * contributed by {@code semantic:<source>}. With a calibration they stay on the index scale
     * (factor, cap and {@code min_score} act after the fusion); without one each score becomes
     * {@code min(raw * factor, cap)} and a hit below {@code min_score} drops.
     */
    public static List<Fragment> semanticFragments(FusionSettings settings, String source,
                                                   List<Hit> hits) {
        List<String> contribution = List.of("semantic:" + source);
        double factor = settings.scoreFactor(source);
        double cap = settings.scoreCap(source);
        List<Fragment> out = new ArrayList<>(hits.size());
        for (Hit hit : hits) {
            double score = hit.score();
            if (!settings.calibrated()) {
                score = Fusion.pyMin(score * factor, cap);
                if (!(score >= settings.minScore())) {
                    continue;
                }
            }
            out.add(new Fragment(hit.fragmentid(), hit.documentid(), hit.text(), score, source,
                    contribution));
        }
        return out;
    }

    /**
     * The Java form of {@code text_fragments}: the first {@code topN} (null: the settings'
     * {@code top_n_text}; a negative one counts from the end, as a Python slice) of one
     * full-text source's hits, sorted best first, as fragments contributed by
     * {@code text:<source>}, scores divided by {@code best}; none when {@code best <= 0}.
     */
    public static List<Fragment> textFragments(FusionSettings settings, String source,
                                               List<Hit> hits, double best, Integer topN) {
        List<Fragment> out = new ArrayList<>();
        if (best <= 0) {
            return out;
        }
        List<String> contribution = List.of("text:" + source);
        int kept = topN == null ? settings.topNText() : topN;
        int end = kept >= 0 ? Math.min(kept, hits.size()) : Math.max(hits.size() + kept, 0);
        for (Hit hit : hits.subList(0, end)) {
            out.add(new Fragment(hit.fragmentid(), hit.documentid(), hit.text(),
                    hit.score() / best, source, contribution));
        }
        return out;
    }
}
