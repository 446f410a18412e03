package thalabus.procedures.fusion;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Java form of {@code thalabus_graph.scoring.fusion.LanguageSlots}: the
 * {@code language-slots} rule fitted on one phrase's unrestricted candidates, then applied by
 * {@link #fuse} to any (possibly restricted) lists of the same phrase.
 *
 * <p>Text evidence is a text hit's score times {@code min(1, coverage / fullCoverage)}, the
 * coverage being the share of the query's words (each weighted by its rarity among the
 * candidates, {@code ln(1 + candidates / (1 + text hits containing it))}) the hit contains.
 * Every candidate's convex score is {@code (1 - w) * semantic_minmax + w * evidence}. Documents
 * hold slots: each language group's semantic scores, best first, then one slot per text-only
 * document ({@code floor * fused}); documents of the query's language (that of the strongest
 * evidence) take their group's slots in convex order, other groups keep the semantic order. A
 * fragment scores its document's slot minus how far its own convex score lies below its
 * document's best, on the semantic scale. Instances are immutable.
 */
public final class LanguageSlots {
    private final double lo;
    private final double hi;
    private final double textWeight;
    private final double fullCoverage;
    private final double floor;
    private final Map<String, Double> idf;
    private final String queryLanguage;
    private final Map<String, Double> slots;
    private final Map<String, Double> bestFused;
    private final Map<String, Double> fitted;

    private LanguageSlots(double lo, double hi, double textWeight, double fullCoverage,
                          double floor, Map<String, Double> idf, String queryLanguage,
                          Map<String, Double> slots, Map<String, Double> bestFused,
                          Map<String, Double> fitted) {
        this.lo = lo;
        this.hi = hi;
        this.textWeight = textWeight;
        this.fullCoverage = fullCoverage;
        this.floor = floor;
        this.idf = idf;
        this.queryLanguage = queryLanguage;
        this.slots = slots;
        this.bestFused = bestFused;
        this.fitted = fitted;
    }

    /**
     * The Java form of {@code LanguageSlots.fit}: the rule fitted on the phrase's unrestricted
     * semantic and text candidates.
     *
     * @param query the phrase (its {@code plain_words} are the query words)
     * @param semantic the semantic candidates (index or output scale)
     * @param text the text candidates, scores divided by their search's best hit
     * @param languages document id to its stored language (a missing or null one is a group of
     *     its own, "no language")
     * @param low the bottom of the semantic range when a fixed sample of the phrase's
     *     candidates gave one (null: the lowest candidate)
     * @param found a text hit's text (that very string) to the query words found in it, where
     *     they were found already ({@link Fusion#sharedWords}); other texts are searched here
     */
    public static LanguageSlots fit(String query, List<Fragment> semantic, List<Fragment> text,
                                    Map<String, String> languages, double textWeight,
                                    double fullCoverage, Double low,
                                    Map<String, Set<String>> found) {
        Map<String, Double> sem = Fusion.best(semantic);
        double lo = low == null || sem.isEmpty() ? minimum(sem.values(), 0.0) : low;
        double hi = maximum(sem.values(), 0.0);
        Set<String> queryWords = Texts.plainWords(query);
        Map<String, Set<String>> hitFound = new HashMap<>();
        for (Fragment f : text) {
            Set<String> shared = f.text() == null ? null : found.get(f.text());
            hitFound.put(f.fragmentid(), shared != null ? shared
                    : Fusion.sharedWords(queryWords, f.text()));
        }
        Map<String, Double> idf = rarity(queryWords, sem, hitFound);
        LanguageSlots model = new LanguageSlots(lo, hi, textWeight, fullCoverage,
                sem.isEmpty() ? 1.0 : lo, idf, null, Map.of(), Map.of(), Map.of());
        Map<String, Double> evidence = model.evidenceScores(text, hitFound);
        Map<String, Double> fused = model.convex(sem, evidence);
        String queryLanguage = null;
        Fragment strongest = null;
        for (Fragment f : text) {
            if (strongest == null || stronger(f, strongest, evidence)) {
                strongest = f;
            }
        }
        if (strongest != null) {
            queryLanguage = languages.get(strongest.documentid());
        }
        Map<String, Double> docSem = new LinkedHashMap<>();
        for (Fragment f : semantic) {
            Double held = docSem.get(f.documentid());
            if (held == null || f.score() > held) {
                docSem.put(f.documentid(), f.score());
            }
        }
        Map<String, Double> bestFused = new LinkedHashMap<>();
        List<Fragment> all = new ArrayList<>(semantic);
        all.addAll(text);
        for (Fragment f : all) {
            double score = fused.get(f.fragmentid());
            Double held = bestFused.get(f.documentid());
            if (held == null || score > held) {
                bestFused.put(f.documentid(), Fusion.pyMax(held == null ? 0.0 : held, score));
            }
        }
        Map<String, String> groups = new HashMap<>();
        for (String d : bestFused.keySet()) {
            groups.put(d, languages.get(d));
        }
        Map<String, Double> slots = Fusion.slotScores(docSem, bestFused, groups,
                Collections.singletonList(queryLanguage));
        return new LanguageSlots(lo, hi, textWeight, fullCoverage, model.floor, idf,
                queryLanguage, slots, bestFused, fused);
    }

    /** {@code min(text, key=(-evidence, fragmentid))}: the first hit with the best evidence,
     *  ties by fragment id. */
    private static boolean stronger(Fragment f, Fragment held, Map<String, Double> evidence) {
        double a = evidence.get(f.fragmentid());
        double b = evidence.get(held.fragmentid());
        if (a != b) {
            return a > b;
        }
        return Texts.compareCodePoints(f.fragmentid(), held.fragmentid()) < 0;
    }

    /** Python's {@code min(values, default=...)}. */
    private static double minimum(Iterable<Double> values, double otherwise) {
        Double out = null;
        for (double v : values) {
            out = out == null ? v : Fusion.pyMin(out, v);
        }
        return out == null ? otherwise : out;
    }

    /** Python's {@code max(values, default=...)}. */
    private static double maximum(Iterable<Double> values, double otherwise) {
        Double out = null;
        for (double v : values) {
            out = out == null ? v : Fusion.pyMax(out, v);
        }
        return out == null ? otherwise : out;
    }

    /** The Java form of {@code _rarity}'s weights: each query word's
     *  {@code ln(1 + candidates / (1 + text hits containing it))}, the candidates being the
     *  distinct ids of the semantic and text hits. */
    private static Map<String, Double> rarity(Set<String> queryWords, Map<String, Double> sem,
                                              Map<String, Set<String>> hitFound) {
        int candidates = sem.size();
        for (String fid : hitFound.keySet()) {
            if (!sem.containsKey(fid)) {
                candidates++;
            }
        }
        Map<String, Integer> holding = new HashMap<>();
        for (Set<String> found : hitFound.values()) {
            for (String w : found) {
                holding.merge(w, 1, Integer::sum);
            }
        }
        Map<String, Double> idf = new LinkedHashMap<>();
        for (String w : queryWords) {
            idf.put(w, Math.log(1 + (double) candidates / (1 + holding.getOrDefault(w, 0))));
        }
        return idf;
    }

    /** The sum of the rarity weights, in the order of {@link #idf}. */
    private double totalWeight() {
        double total = 0.0;
        for (double weight : idf.values()) {
            total += weight;
        }
        return total;
    }

    /** The share of the query's weight the found words hold (0 without weight). */
    private double covered(Set<String> found, double total) {
        if (!(total > 0)) {
            return 0.0;
        }
        double sum = 0.0;
        for (Map.Entry<String, Double> e : idf.entrySet()) {
            if (found.contains(e.getKey())) {
                sum += e.getValue();
            }
        }
        return sum / total;
    }

    /** The Java form of {@code _evidence_scores}: fragment id to its best text evidence, from
     *  the query words each hit was found to contain (by fragment id). */
    private Map<String, Double> evidenceScores(List<Fragment> text,
                                               Map<String, Set<String>> found) {
        double total = totalWeight();
        Map<Set<String>, Double> share = new HashMap<>();
        Map<String, Double> out = new LinkedHashMap<>();
        for (Fragment f : text) {
            double score = f.score();
            if (fullCoverage > 0) {
                Set<String> wordsIn = found.get(f.fragmentid());
                Double coveredShare = share.get(wordsIn);
                if (coveredShare == null) {
                    coveredShare = covered(wordsIn, total);
                    share.put(wordsIn, coveredShare);
                }
                score *= Fusion.pyMin(1.0, coveredShare / fullCoverage);
            }
            Double held = out.get(f.fragmentid());
            if (score > (held == null ? Double.NEGATIVE_INFINITY : held)) {
                out.put(f.fragmentid(), score);
            }
        }
        return out;
    }

    /** The Java form of {@code _convex}: convex scores on best-score maps (semantic raw,
     *  evidence already weighted). */
    private Map<String, Double> convex(Map<String, Double> semantic,
                                       Map<String, Double> evidence) {
        double w = textWeight;
        double span = hi - lo;
        Map<String, Double> out = new LinkedHashMap<>();
        semantic.forEach((fid, s) -> {
            double norm = span > 0 ? Fusion.pyMin(Fusion.pyMax((s - lo) / span, 0.0), 1.0) : 1.0;
            out.put(fid, (1 - w) * norm + w * evidence.getOrDefault(fid, 0.0));
        });
        evidence.forEach((fid, e) -> out.putIfAbsent(fid, w * e));
        return out;
    }

    /** The Java form of {@code LanguageSlots.coverage}: the share of the query's rarity
     *  weight {@code text} contains (0 without query words). */
    public double coverage(String text) {
        double total = totalWeight();
        if (total <= 0) {
            return 0.0;
        }
        return covered(Fusion.sharedWords(idf.keySet(), text), total);
    }

    /** The Java form of {@code LanguageSlots.evidence}: text hits with their score times
     *  {@code min(1, coverage / fullCoverage)}. */
    public List<Fragment> evidence(List<Fragment> text) {
        if (fullCoverage <= 0) {
            return new ArrayList<>(text);
        }
        List<Fragment> out = new ArrayList<>(text.size());
        for (Fragment f : text) {
            out.add(f.withScore(f.score()
                    * Fusion.pyMin(1.0, coverage(f.text()) / fullCoverage)));
        }
        return out;
    }

    /**
     * The Java form of {@code LanguageSlots.fuse}: the fused list of these hits of the fitted
     * phrase. A fragment of a candidate document scores from its document's slot, never above
     * it; a document only a restricted search found lies below every candidate
     * ({@code floor * fused}).
     */
    public List<Fragment> fuse(List<Fragment> semantic, List<Fragment> text) {
        Map<String, Double> fused = fitted;
        boolean unseen = false;
        for (List<Fragment> list : List.of(semantic, text)) {
            for (Fragment f : list) {
                unseen |= !fitted.containsKey(f.fragmentid());
            }
        }
        if (unseen) {
            fused = Fusion.convexScores(semantic, evidence(text), lo, hi, textWeight);
        }
        double span = Fusion.pyMax(hi - lo, 0.0);
        Fusion.Merged merged = Fusion.merged(semantic, text);
        Map<String, Double> scores = new HashMap<>();
        for (Map.Entry<String, Fragment> e : merged.first().entrySet()) {
            String fid = e.getKey();
            String doc = e.getValue().documentid();
            Double slot = slots.get(doc);
            if (slot == null) {
                scores.put(fid, floor * fused.get(fid));
            } else {
                double below = Fusion.pyMax(bestFused.get(doc) - fused.get(fid), 0.0) * span;
                scores.put(fid, Fusion.pyMax(slot - below, 0.0));
            }
        }
        return Fusion.rescored(merged, scores);
    }

    /** (lo, hi): the semantic range of the candidates. */
    public double[] semanticRange() {
        return new double[] {lo, hi};
    }

    /** The lowest semantic score of the candidates (1.0 without any). */
    public double floor() {
        return floor;
    }

    /** The language whose documents lexical evidence reorders (null: none or unknown). */
    public String queryLanguage() {
        return queryLanguage;
    }

    /** Query word to its rarity weight among the candidates. */
    public Map<String, Double> idf() {
        return Collections.unmodifiableMap(idf);
    }

    /** Document id to its slot, for every candidate document. */
    public Map<String, Double> slots() {
        return Collections.unmodifiableMap(slots);
    }

    /** Document id to the best convex score of its candidate fragments. */
    public Map<String, Double> bestFused() {
        return Collections.unmodifiableMap(bestFused);
    }

    /** Fragment id to the convex score of every candidate. */
    public Map<String, Double> fitted() {
        return Collections.unmodifiableMap(fitted);
    }
}
