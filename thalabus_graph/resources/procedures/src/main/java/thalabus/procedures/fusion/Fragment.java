package thalabus.procedures.fusion;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.TreeSet;

/**
 * The Java form of {@code thalabus_graph.fragments.Fragment}: one retrieved piece of a document
 * as the fusion rules see it. {@code text} may be null (a stub); {@code contributions} names the
 * searches that found it, held sorted (code point order) and distinct, the form every fused
 * fragment of the engine carries.
 */
public record Fragment(String fragmentid, String documentid, String text, double score,
                       String source, List<String> contributions) {
    /** {@code sort_fragments}' order: score descending, then fragment id (code points). Scores
     *  compare as Python floats do (-0.0 equals 0.0). */
    public static final Comparator<Fragment> ORDER = (a, b) -> {
        if (a.score > b.score) {
            return -1;
        }
        if (a.score < b.score) {
            return 1;
        }
        return Texts.compareCodePoints(a.fragmentid, b.fragmentid);
    };

    /** Contributions sorted and distinct, whatever order they came in. */
    public Fragment {
        contributions = sortedDistinct(contributions);
    }

    /** A copy with another score. */
    public Fragment withScore(double newScore) {
        return new Fragment(fragmentid, documentid, text, newScore, source, contributions);
    }

    /** Names sorted by code point and distinct ({@code tuple(sorted(set(names)))}). */
    public static List<String> sortedDistinct(Collection<String> names) {
        TreeSet<String> set = new TreeSet<>(Texts.CODE_POINT_ORDER);
        set.addAll(names);
        return List.copyOf(set);
    }

    /** The Java form of {@code sort_fragments}: a new list, best first (a stable sort). */
    public static List<Fragment> sorted(Collection<Fragment> fragments) {
        List<Fragment> out = new ArrayList<>(fragments);
        out.sort(ORDER);
        return out;
    }
}
