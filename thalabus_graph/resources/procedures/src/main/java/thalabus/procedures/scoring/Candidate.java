package thalabus.procedures.scoring;

/**
 * The Java form of {@code thalabus_graph.scoring.scale.Candidate}: one of a phrase's
 * unrestricted semantic candidates as its background reads it.
 *
 * @param score index scale, {@code (1 + cosine) / 2}
 * @param text its text (null: not read)
 * @param language its document's stored language (null: none or not known)
 */
public record Candidate(String source, double score, String text, String language) {}
