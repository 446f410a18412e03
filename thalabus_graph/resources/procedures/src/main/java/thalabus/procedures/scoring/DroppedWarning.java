package thalabus.procedures.scoring;

import java.util.Map;

/**
 * The Java form of {@code thalabus_graph.scoring.scale.DroppedWarning}: what the calibrated
 * scale removed from (or kept with doubt in) one phrase's result, a query warning of kind
 * {@code scores}.
 *
 * @param phrase the phrase (the warning's subject)
 * @param dropped the fragments removed
 * @param kept those kept under {@code min_score} with doubt
 * @param bestCosine the phrase's best candidate's cosine (null: not known)
 * @param rule the rule that acted: {@code gate}, {@code min_score} or {@code doubtful}
 * @param message its one line for people, as the engine words it
 */
public record DroppedWarning(String phrase, int dropped, int kept, Double bestCosine,
                             String rule, String message) {
    /** The warning's kind, as {@code QueryWarning.kind} names it. */
    public static final String KIND = "scores";

    /**
     * The warning with its message ({@code DroppedWarning.of}): {@code gate} is the phrase's
     * gate, {@code floor} the score floor that acted.
     */
    public static DroppedWarning of(String phrase, int dropped, int kept, Double bestCosine,
                                    String rule, double gate, double floor) {
        String cosine = bestCosine == null ? "unknown" : Python.fixed(bestCosine, 3);
        String at = "the score floor " + Python.general(floor);
        String what = Map.of(
                "gate", "the phrase gate (" + Python.fixed(gate, 3) + ": the corpus seems to hold "
                        + "nothing on it)",
                "min_score", at,
                "doubtful", at + "; " + kept + " kept under it with doubt (the gate, "
                        + Python.fixed(gate, 3) + ", judged the topic absent, but fragments in "
                        + "another language come near it)").get(rule);
        if (what == null) {
            throw new IllegalArgumentException("unknown rule " + rule);
        }
        String done = dropped != 0 ? dropped + " fragment(s) dropped by " + what
                : "every fragment under " + what;
        String message = "phrase " + Python.repr(phrase) + ": " + done + "; best cosine " + cosine;
        return new DroppedWarning(phrase, dropped, kept, bestCosine, rule, message);
    }
}
