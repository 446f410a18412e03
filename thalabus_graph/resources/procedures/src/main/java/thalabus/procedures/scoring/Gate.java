package thalabus.procedures.scoring;

/**
 * The Java form of {@code thalabus_graph.scoring.calibration.Gate}: P(the corpus holds a
 * fragment relevant to a phrase) from the cosine of the phrase's best candidate and its lexical
 * share, {@code 1 / (1 + exp(-(intercept + slope * best + shareSlope * share)))}; without a
 * {@code shareSlope} (null) the cosine alone.
 */
public record Gate(double intercept, double slope, Double shareSlope) {
    /** A gate on the best cosine alone. */
    public Gate(double intercept, double slope) {
        this(intercept, slope, null);
    }

    /** The best cosine at which the gate is 0.5 with no shared word. */
    public double midpoint() {
        return midpointAt(0.0);
    }

    /** The best cosine at which the gate is 0.5 for a phrase with this lexical share. */
    public double midpointAt(double share) {
        return -(intercept + shareSlopeOrZero() * share) / slope;
    }

    /**
     * The gate of a phrase whose best candidate has cosine {@code best} and whose lexical share
     * is {@code share} (null, not known: read as 0.0, no shared word found).
     */
    public double probability(double best, Double share) {
        double logit = slope * best + shareSlopeOrZero() * (share == null ? 0.0 : share);
        return new SourceMap(intercept, 1.0).probability(logit);
    }

    /** The gate of a phrase whose best candidate has this cosine, its share not known. */
    public double probability(double best) {
        return probability(best, null);
    }

    /** The same gate moved along its logit (positive: more lenient): an operating point. */
    public Gate shifted(double logit) {
        return new Gate(intercept + logit, slope, shareSlope);
    }

    private double shareSlopeOrZero() {
        return shareSlope == null ? 0.0 : shareSlope;
    }
}
