package thalabus.procedures.fusion;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The Java form of {@code thalabus_graph/scoring/fusion.py}'s functions: how a semantic
 * phrase's vector hits and text hits become one ranked list ({@code convex}, {@code max},
 * {@code rrf}, and the pieces {@link LanguageSlots} is made of).
 *
 * <p>Every float operation happens in the order the Python code performs it, and
 * {@code min}/{@code max} keep Python's choice of the first argument on a tie, so a score here
 * equals the engine's bit for bit wherever Python's own order is fixed (a sum over a frozenset
 * of words is not: there the two may differ in the last bits).
 */
public final class Fusion {
    private Fusion() {}

    /** Python's {@code min(a, b)}: {@code a} unless {@code b < a}. */
    static double pyMin(double a, double b) {
        return b < a ? b : a;
    }

    /** Python's {@code max(a, b)}: {@code a} unless {@code b > a}. */
    static double pyMax(double a, double b) {
        return b > a ? b : a;
    }

    /**
     * The Java form of {@code shared_words}: the query words found in {@code text} as
     * substrings of its Python-lowercased form ({@link Texts#lower}). Substring tests on UTF-16
     * strings and on code points agree for the whole-character words a query holds.
     */
    public static Set<String> sharedWords(Collection<String> queryWords, String text) {
        Set<String> out = new HashSet<>();
        if (text == null || text.isEmpty()) {
            return out;
        }
        String low = Texts.lower(text);
        for (String w : queryWords) {
            if (low.contains(w)) {
                out.add(w);
            }
        }
        return out;
    }

    /** {@code _merged}'s answer: the first fragment seen per id (in reading order) and every
     *  contribution its id gathered, sorted and distinct. */
    public record Merged(Map<String, Fragment> first, Map<String, List<String>> contributions) {}

    /** The Java form of {@code _merged}. */
    @SafeVarargs
    public static Merged merged(List<Fragment>... lists) {
        Map<String, Fragment> first = new LinkedHashMap<>();
        Map<String, Set<String>> gathered = new HashMap<>();
        for (List<Fragment> fragments : lists) {
            for (Fragment f : fragments) {
                Set<String> seen = gathered.get(f.fragmentid());
                if (seen == null) {
                    first.put(f.fragmentid(), f);
                    seen = new TreeSet<>(Texts.CODE_POINT_ORDER);
                    gathered.put(f.fragmentid(), seen);
                }
                seen.addAll(f.contributions());
            }
        }
        Map<String, List<String>> contributions = new HashMap<>();
        gathered.forEach((fid, names) -> contributions.put(fid, List.copyOf(names)));
        return new Merged(first, contributions);
    }

    /** The Java form of {@code _best}: fragment id to its best score in the list. */
    public static Map<String, Double> best(List<Fragment> fragments) {
        Map<String, Double> best = new LinkedHashMap<>();
        for (Fragment f : fragments) {
            Double held = best.get(f.fragmentid());
            if (f.score() > (held == null ? Double.NEGATIVE_INFINITY : held)) {
                best.put(f.fragmentid(), f.score());
            }
        }
        return best;
    }

    /** The Java form of {@code _rescored}: each first fragment with its new score and its
     *  gathered contributions, best first. */
    static List<Fragment> rescored(Merged merged, Map<String, Double> scores) {
        List<Fragment> out = new ArrayList<>(merged.first().size());
        merged.first().forEach((fid, f) -> out.add(new Fragment(fid, f.documentid(), f.text(),
                scores.get(fid), f.source(), merged.contributions().get(fid))));
        out.sort(Fragment.ORDER);
        return out;
    }

    /** The Java form of {@code minmax}: {@code (score - lo) / (hi - lo)} clipped to [0, 1];
     *  an empty range ({@code hi <= lo}) gives 1.0. */
    public static double minmax(double score, double lo, double hi) {
        if (hi <= lo) {
            return 1.0;
        }
        return pyMin(pyMax((score - lo) / (hi - lo), 0.0), 1.0);
    }

    /** The Java form of {@code convex_scores}: {@code (1 - w) * minmax(semantic) + w * text}
     *  per fragment id (absent side 0; a fragment found twice in a list counts its best). */
    public static Map<String, Double> convexScores(List<Fragment> semantic, List<Fragment> text,
                                                   double lo, double hi, double textWeight) {
        Map<String, Double> sem = new LinkedHashMap<>();
        best(semantic).forEach((fid, s) -> sem.put(fid, minmax(s, lo, hi)));
        Map<String, Double> txt = best(text);
        Set<String> ids = new LinkedHashSet<>(sem.keySet());
        ids.addAll(txt.keySet());
        Map<String, Double> out = new HashMap<>();
        for (String fid : ids) {
            out.put(fid, (1 - textWeight) * sem.getOrDefault(fid, 0.0)
                    + textWeight * txt.getOrDefault(fid, 0.0));
        }
        return out;
    }

    /** The Java form of {@code fuse_convex}: plain convex fusion, best first. */
    public static List<Fragment> fuseConvex(List<Fragment> semantic, List<Fragment> text,
                                            double lo, double hi, double textWeight) {
        return rescored(merged(semantic, text), convexScores(semantic, text, lo, hi, textWeight));
    }

    /** The Java form of {@code fuse_max}: the larger of the min-max semantic score and the
     *  text score per fragment. */
    public static List<Fragment> fuseMax(List<Fragment> semantic, List<Fragment> text,
                                         double lo, double hi) {
        Map<String, Double> sem = new HashMap<>();
        best(semantic).forEach((fid, s) -> sem.put(fid, minmax(s, lo, hi)));
        Map<String, Double> txt = best(text);
        Merged merged = merged(semantic, text);
        Map<String, Double> scores = new HashMap<>();
        for (String fid : merged.first().keySet()) {
            scores.put(fid, pyMax(sem.getOrDefault(fid, 0.0), txt.getOrDefault(fid, 0.0)));
        }
        return rescored(merged, scores);
    }

    /** The Java form of {@code fuse_rrf}: reciprocal rank fusion, {@code sum 1 / (k + rank)}
     *  over the two lists, each ranked best first. */
    public static List<Fragment> fuseRrf(List<Fragment> semantic, List<Fragment> text, int k) {
        Map<String, Double> scores = new HashMap<>();
        for (List<Fragment> ranked : List.of(Fragment.sorted(semantic), Fragment.sorted(text))) {
            int rank = 1;
            for (Fragment f : ranked) {
                scores.put(f.fragmentid(), scores.getOrDefault(f.fragmentid(), 0.0)
                        + 1.0 / (k + rank));
                rank++;
            }
        }
        return rescored(merged(semantic, text), scores);
    }

    /**
     * The Java form of {@code slot_scores}: final scores where each group's members take the
     * group's slots.
     *
     * @param semantic id to semantic score (the output scale) of the semantic hits
     * @param fused id to convex score of every candidate, semantic or not
     * @param groups id to group key (null is a group too; a missing id is in it)
     * @param reordered the groups whose members are ordered by {@code fused} (the query's
     *     language; may hold null); the others keep their semantic order
     */
    public static Map<String, Double> slotScores(Map<String, Double> semantic,
                                                 Map<String, Double> fused,
                                                 Map<String, String> groups,
                                                 Collection<String> reordered) {
        double floor = 1.0;
        if (!semantic.isEmpty()) {
            floor = Double.POSITIVE_INFINITY;
            boolean firstValue = true;
            for (double s : semantic.values()) {
                floor = firstValue ? s : pyMin(floor, s);
                firstValue = false;
            }
        }
        Set<String> chosen = new HashSet<>(reordered);
        Map<String, List<String>> members = new LinkedHashMap<>();
        for (String fid : fused.keySet()) {
            members.computeIfAbsent(groups.get(fid), g -> new ArrayList<>()).add(fid);
        }
        Comparator<String> byFused = (a, b) -> descending(fused.get(a), fused.get(b));
        Comparator<String> bySemantic = (a, b) -> descending(semantic.getOrDefault(a, -1.0),
                semantic.getOrDefault(b, -1.0));
        Map<String, Double> out = new HashMap<>();
        for (Map.Entry<String, List<String>> entry : members.entrySet()) {
            List<String> ordered = new ArrayList<>(entry.getValue());
            Comparator<String> order = chosen.contains(entry.getKey())
                    ? byFused.thenComparing(bySemantic) : bySemantic.thenComparing(byFused);
            ordered.sort(order.thenComparing(Texts.CODE_POINT_ORDER));
            List<Double> slots = new ArrayList<>();
            for (String fid : entry.getValue()) {
                if (semantic.containsKey(fid)) {
                    slots.add(semantic.get(fid));
                }
            }
            slots.sort((a, b) -> descending(a, b));
            for (int position = 0; position < ordered.size(); position++) {
                String fid = ordered.get(position);
                out.put(fid, position < slots.size() ? slots.get(position)
                        : floor * fused.get(fid));
            }
        }
        return out;
    }

    /** Best first, comparing as Python floats (equal when neither is smaller). */
    static int descending(double a, double b) {
        return a > b ? -1 : (a < b ? 1 : 0);
    }

    /**
     * The Java form of {@code ranked_onto}: a fused list's order on its phrase's semantic
     * scale. The fragment ranked {@code i} gets the {@code i}-th best semantic score; those
     * ranked below every semantic hit get {@code floor * min(share, 1) * 0.5}, their share of
     * the last fused score given a slot. Without semantic hits the list comes back as it is.
     */
    public static List<Fragment> rankedOnto(List<Fragment> fused, List<Fragment> semantic) {
        List<Double> slots = new ArrayList<>();
        for (Fragment f : semantic) {
            slots.add(f.score());
        }
        if (slots.isEmpty()) {
            return new ArrayList<>(fused);
        }
        slots.sort((a, b) -> descending(a, b));
        List<Fragment> ordered = Fragment.sorted(fused);
        double floor = slots.get(slots.size() - 1);
        double last = ordered.isEmpty() ? 0.0
                : ordered.get(Math.min(slots.size(), ordered.size()) - 1).score();
        List<Fragment> out = new ArrayList<>(ordered.size());
        for (int i = 0; i < ordered.size(); i++) {
            Fragment f = ordered.get(i);
            double score;
            if (i < slots.size()) {
                score = slots.get(i);
            } else {
                double share = last > 0 ? f.score() / last : 0.0;
                score = floor * pyMin(share, 1.0) * 0.5;
            }
            out.add(f.withScore(score));
        }
        return out;
    }
}
