package thalabus.procedures.scoring;

/**
 * The Java form of {@code thalabus_graph.scoring.calibration.SourceMap}: the logistic map of one
 * source family, {@code p = 1 / (1 + exp(-(intercept + slope * e)))} of the tail evidence
 * {@code e} ({@link Calibration#evidence}).
 */
public record SourceMap(double intercept, double slope) {
    /** The calibrated score of a hit with this tail evidence, in (0, 1); never overflows. */
    public double probability(double evidence) {
        double x = intercept + slope * evidence;
        if (x >= 0) {
            return 1.0 / (1.0 + StrictMath.exp(-x));
        }
        double e = StrictMath.exp(x);
        return e / (1.0 + e);
    }
}
