package thalabus.procedures.scoring;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.DoubleUnaryOperator;

/**
 * The Java form of the per-phrase rules of {@code thalabus_graph.scoring.scale}
 * ({@code sample}, {@code other_language_best}, and the calibrated-score steps of
 * {@code PhraseScale.remember} and {@code PhraseScale.apply}): a phrase's background is read
 * once from a fixed sample of its unrestricted candidates ({@link #remember}), and each of its
 * fragments then gets {@code min(calibrated * factor, cap)} of its source, an exact match of a
 * short phrase at least the phrase's best, and those under {@code min_score} drop, but for the
 * doubt rule ({@link #DOUBT}); what was dropped is a {@link DroppedWarning} ({@link #apply}).
 *
 * <p>The caller keeps the state {@code PhraseScale} keeps (one background per phrase, the last
 * warning of a phrase) and answers its {@code held} question itself ({@code foreign}).
 */
public final class Scale {
    /** Best candidates per vector source a phrase's background is read from. */
    public static final int BACKGROUND_TOP_N = 200;
    /** Share of {@code min_score} above which a phrase the other-language rule lifted keeps
     * its fragments when {@code min_score} would empty it. */
    public static final double DOUBT = 0.5;

    private static final Comparator<Fragment> BEST_FIRST = (a, b) -> a.score() > b.score() ? -1
            : a.score() < b.score() ? 1 : Python.compare(a.fragmentid(), b.fragmentid());

    private Scale() {}

    /** A phrase's fragments on the calibrated scale and the warning of what the scale removed. */
    public record Applied(List<Fragment> fragments, DroppedWarning warning) {}

    private record Drawn(double score, String id, Candidate candidate) {}

    private record Scored(Fragment fragment, double score) {}

    /**
     * The best {@link #BACKGROUND_TOP_N} candidates of each vector source among a phrase's
     * unrestricted fragments ({@code languages}: document id to stored language) and the
     * candidates {@code beyond} its pool (a fragment found twice counts once), best first per
     * source (ties: fragment id, candidates beyond first), sources in name order.
     */
    public static List<Candidate> sample(List<Fragment> semantic, List<Candidate> beyond,
                                         Map<String, String> languages) {
        Map<String, List<Drawn>> bySource = new TreeMap<>(Python.CODE_POINT_ORDER);
        Set<String> seen = new HashSet<>();
        for (Fragment f : semantic) {
            if (seen.add(f.fragmentid())) {
                bySource.computeIfAbsent(f.source(), s -> new ArrayList<>()).add(new Drawn(
                        f.score(), f.fragmentid(), new Candidate(f.source(), f.score(), f.text(),
                        languages == null ? null : languages.get(f.documentid()))));
            }
        }
        for (Candidate c : beyond) {
            bySource.computeIfAbsent(c.source(), s -> new ArrayList<>()).add(new Drawn(c.score(),
                    "", c));
        }
        List<Candidate> out = new ArrayList<>();
        for (List<Drawn> found : bySource.values()) {
            found.sort((a, b) -> a.score > b.score ? -1 : a.score < b.score ? 1
                    : Python.compare(a.id, b.id));
            for (Drawn d : found.subList(0, Math.min(BACKGROUND_TOP_N, found.size()))) {
                out.add(d.candidate);
            }
        }
        return out;
    }

    /**
     * The best cosine among candidates whose document is in another language than the best
     * candidate's (null: the best one's language is not known, or no other language).
     */
    public static Double otherLanguageBest(List<Candidate> drawn) {
        if (drawn.isEmpty()) {
            return null;
        }
        Candidate top = drawn.get(0);
        for (Candidate c : drawn) {
            if (c.score() > top.score()) {
                top = c;
            }
        }
        if (top.language() == null) {
            return null;
        }
        Double best = null;
        for (Candidate c : drawn) {
            if (c.language() != null && !c.language().equals(top.language())
                    && (best == null || c.score() > best)) {
                best = c.score();
            }
        }
        return best == null ? null : 2.0 * best - 1.0;
    }

    /**
     * A phrase's background from its unrestricted semantic candidates (index scale, no factor):
     * the {@link #sample} of the pool's fragments and the candidates {@code beyond} it, the
     * sampled sources' fragment counts ({@code sizes}), the phrase's lexical share among their
     * texts (only for a gate that reads it), the best cosine in another language, and whether
     * one of them or of the phrase's unrestricted {@code text} hits holds every word of a short
     * phrase (a one-word phrase with any text hit counts too). {@code foreign}: the phrase is in
     * a language the graph's text lacks (Python's {@code held(phrase) is False}), read only when
     * it can change the gate ({@link Calibration#languageMatters}). Null without a candidate.
     */
    public static Background remember(Calibration calibration, String phrase,
                                      List<Fragment> semantic, Map<String, Long> sizes,
                                      List<Candidate> beyond, List<Fragment> text,
                                      Map<String, String> languages, boolean foreign) {
        List<Candidate> drawn = sample(semantic, beyond, languages);
        if (drawn.isEmpty()) {
            return null;
        }
        Set<String> sources = new LinkedHashSet<>();
        drawn.forEach(c -> sources.add(c.source()));
        long size = 0;
        for (String source : sources) {
            size += sizes.getOrDefault(source, 0L);
        }
        Gate gate = calibration.gate();
        List<String> texts = texts(drawn);
        Double share = gate != null && gate.shareSlope() != null
                ? Lexical.lexicalShare(phrase, texts) : null;
        double[] cosines = new double[drawn.size()];
        for (int i = 0; i < cosines.length; i++) {
            cosines[i] = 2.0 * drawn.get(i).score() - 1.0;
        }
        Background bg = calibration.background(cosines, size, share);
        List<String> hits = new ArrayList<>(text.size());
        text.forEach(f -> hits.add(f.text()));
        boolean lexical = Lexical.covers(phrase, texts) || Lexical.covers(phrase, hits)
                || (Tokens.lexicalWords(phrase, 1).size() == 1 && !text.isEmpty());
        bg = bg.withOther(otherLanguageBest(drawn), lexical);
        if (foreign && calibration.languageMatters(bg)) {
            bg = bg.withForeign(true);
        }
        return bg;
    }

    private static List<String> texts(Collection<Candidate> drawn) {
        List<String> out = new ArrayList<>(drawn.size());
        drawn.forEach(c -> out.add(c.text()));
        return out;
    }

    /**
     * The phrase's fragments on the calibrated scale, best first (score, then fragment id):
     * each {@code min(calibrated * factor, cap)} of its source against the phrase's background;
     * a fragment holding every word of a short phrase at least the phrase's best candidate's
     * (capped); those under {@code min_score} dropped, unless every one is and the gate was
     * lifted by a candidate in another language while the best candidate drops, when those at
     * or above {@code DOUBT * min_score} stay. Each kept fragment's contributions gain
     * {@code calibrated:<source> <raw> -> <calibrated>}. Unchanged but sorted without a
     * calibration or a background.
     *
     * @throws ArithmeticException where Python divides by a gate of exactly 0.0 (a gate logit
     *     under about -745) while judging the warning's rule, as the engine fails there
     */
    public static Applied apply(Calibration calibration, ScaleSettings settings, String phrase,
                                Background bg, List<Fragment> fragments) {
        if (calibration == null || bg == null) {
            return new Applied(sorted(fragments), null);
        }
        DoubleUnaryOperator scored = calibration.scorer(Calibration.DEFAULT_SOURCE, bg);
        double floor = settings.minScore();
        List<Scored> calibrated = new ArrayList<>();
        for (Fragment f : fragments) {
            double score = Python.min(scored.applyAsDouble(2.0 * f.score() - 1.0)
                    * settings.factor(f.source()), settings.cap(f.source()));
            calibrated.add(new Scored(f, score));
        }
        if (!calibrated.isEmpty() && Lexical.isShort(phrase) && bg.best() != null) {
            double top = scored.applyAsDouble(bg.best());
            List<Scored> lifted = new ArrayList<>();
            for (Scored s : calibrated) {
                boolean whole = Lexical.covers(phrase, Collections.singletonList(
                        s.fragment.text()));
                lifted.add(whole ? new Scored(s.fragment, Python.max(s.score,
                        Python.min(top, settings.cap(s.fragment.source())))) : s);
            }
            calibrated = lifted;
        }
        List<Scored> kept = new ArrayList<>();
        for (Scored s : calibrated) {
            if (s.score >= floor) {
                kept.add(s);
            }
        }
        List<Scored> doubtful = new ArrayList<>();
        if (kept.isEmpty() && !calibrated.isEmpty() && bg.other() != null && bg.best() != null
                && scored.applyAsDouble(bg.best()) < floor) {
            for (Scored s : calibrated) {
                if (s.score >= DOUBT * floor) {
                    doubtful.add(s);
                }
            }
        }
        DroppedWarning warning = note(calibration, phrase, bg, floor, calibrated, kept, doubtful);
        List<Fragment> out = new ArrayList<>();
        for (Scored s : kept.isEmpty() ? doubtful : kept) {
            Fragment f = s.fragment;
            TreeSet<String> contributions = new TreeSet<>(Python.CODE_POINT_ORDER);
            contributions.addAll(f.contributions());
            contributions.add("calibrated:" + f.source() + " " + Python.fixed(f.score(), 4)
                    + " -> " + Python.fixed(s.score, 4));
            out.add(new Fragment(f.fragmentid(), f.documentid(), f.text(), s.score, f.source(),
                    new ArrayList<>(contributions)));
        }
        return new Applied(sorted(out), warning);
    }

    /** The phrase's warning when it was emptied, kept with doubt, or lost a fragment its gate
     * alone pushed under {@code min_score}; else null. */
    private static DroppedWarning note(Calibration calibration, String phrase, Background bg,
                                       double floor, List<Scored> calibrated, List<Scored> kept,
                                       List<Scored> doubtful) {
        int dropped = calibrated.size() - kept.size() - doubtful.size();
        double gate = calibration.gateOf(bg);
        if ((dropped <= 0 && doubtful.isEmpty()) || calibrated.isEmpty()) {
            return null;
        }
        String rule;
        if (!doubtful.isEmpty()) {
            rule = "doubtful";
        } else if (gate < 1.0 && gateCut(calibrated, floor, gate)) {
            rule = "gate";
        } else if (kept.isEmpty()) {
            rule = "min_score";
        } else {
            return null;
        }
        return DroppedWarning.of(phrase, dropped, doubtful.size(), bg.best(), rule, gate, floor);
    }

    /** Python's {@code any(score < floor <= score / gate ...)}: a fragment only the gate put
     * under the floor. */
    private static boolean gateCut(List<Scored> calibrated, double floor, double gate) {
        for (Scored s : calibrated) {
            if (s.score < floor) {
                if (gate == 0.0) {
                    throw new ArithmeticException("float division by zero");
                }
                if (floor <= s.score / gate) {
                    return true;
                }
            }
        }
        return false;
    }

    private static List<Fragment> sorted(List<Fragment> fragments) {
        List<Fragment> out = new ArrayList<>(fragments);
        out.sort(BEST_FIRST);
        return out;
    }
}
