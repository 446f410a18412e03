package thalabus.procedures.scoring;

import java.util.List;

/**
 * The part of {@code thalabus_graph.fragments.Fragment} the calibrated scale reads and writes:
 * one retrieved piece of a document, its score (index scale {@code (1 + cosine) / 2} before
 * {@link Scale#apply}, calibrated after), the source it came from and the searches that
 * produced it ({@code contributions}, sorted by code point).
 */
public record Fragment(String fragmentid, String documentid, String text, double score,
                       String source, List<String> contributions) {
    public Fragment {
        contributions = List.copyOf(contributions);
    }
}
