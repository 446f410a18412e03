package thalabus.procedures.scoring;

/**
 * The Java form of {@code thalabus_graph.scoring.calibration.Background}: a phrase's background
 * in one source, cosines {@code ~ Normal(mu, sigma)} over {@code size} fragments
 * ({@link Calibration#background(double[], long, int, Double)} fits it).
 *
 * @param best the highest candidate cosine (null: not known)
 * @param share the phrase's lexical share among its candidates ({@link Lexical#lexicalShare};
 *     null: not known)
 * @param foreign the phrase is in a language the graph's text lacks, so the calibration's
 *     foreign gate judges it too
 * @param other the best cosine among candidates in another language than the best candidate's
 *     (null: none, or languages not known), which the foreign gate judges too
 * @param lexical a candidate holds every word of the short phrase ({@link Lexical#covers}), so
 *     the gate lets it through whole
 */
public record Background(double mu, double sigma, long size, Double best, Double share,
                         boolean foreign, Double other, boolean lexical) {
    /** A background with what the gate reads beyond the fit left unknown. */
    public Background(double mu, double sigma, long size, Double best, Double share) {
        this(mu, sigma, size, best, share, false, null, false);
    }

    /** The same background with {@code foreign} set as given. */
    public Background withForeign(boolean value) {
        return new Background(mu, sigma, size, best, share, value, other, lexical);
    }

    /** The same background with {@code other} and {@code lexical} set as given. */
    public Background withOther(Double value, boolean holdsWhole) {
        return new Background(mu, sigma, size, best, share, foreign, value, holdsWhole);
    }
}
