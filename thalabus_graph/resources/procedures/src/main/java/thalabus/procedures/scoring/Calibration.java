package thalabus.procedures.scoring;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.DoubleUnaryOperator;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The Java form of {@code thalabus_graph.scoring.calibration.Calibration} and of that module's
 * functions ({@link #background(double[], long, int, Double)}, {@link #evidence},
 * {@link #shipped}): the calibration of one embedding model, which puts a semantic hit's cosine
 * on a scale that reads as relevance, P(relevant) of how far the hit stands out from its
 * phrase's background, times the phrase gate.
 *
 * <p>Every step computes the same doubles in the same order as the Python engine (the normal
 * quantiles are CPython's AS241, {@link NormalDist}; only {@code erfc}, {@link Erfc}, and
 * {@code exp}/{@code log10} may differ from the C library's in the last bit), so a score
 * computed inside Neo4j matches the engine's to about 1e-15.
 *
 * <pre>{@code
 * Calibration c = Calibration.shipped("intfloat/multilingual-e5-small");
 * Background bg = c.background(cosines, 5000, null);
 * double score = c.score("default", 0.91, bg);
 * }</pre>
 */
public final class Calibration {
    /** The source-family key used for a source without its own map. */
    public static final String DEFAULT_SOURCE = "default";
    /** Best ranks left out of the background fit (they are where relevant hits sit). */
    public static final int DEFAULT_SKIP = 20;
    /** Smallest background spread (cosine units): a flat candidate list is not infinitely sure. */
    public static final double MIN_SIGMA = 1e-3;
    /** Share of the index score in a calibrated score (keeps saturated hits in order). */
    public static final double RAW_WEIGHT = 1e-6;
    /** How much more lenient the foreign gate must be before a phrase's language is read. */
    public static final double LANGUAGE_MATTERS = 0.01;
    private static final double TAIL_FLOOR = 1e-300;
    private static final double SQRT2 = Math.sqrt(2.0);

    private final String model;
    private final Map<String, SourceMap> sources;
    private final int skip;
    private final List<String> fittedOn;
    private final JsonNode measured;
    private final Gate gate;
    private final Gate foreignGate;
    private final SourceMap reading;

    /**
     * A calibration (no check: {@link CalibrationFile#fromDict} checks a file's values).
     *
     * @param model the embedding model's name
     * @param sources source family ({@code chapters}, {@code paragraphs}, ... or
     *     {@code default}) to its logistic map, in the file's order
     * @param skip best ranks left out of the background fit
     * @param fittedOn what it was fitted on, for people
     * @param measured what was measured when it was fitted, for people (null: nothing)
     * @param gate the phrase gate (null: every phrase is taken to have a relevant fragment)
     * @param foreignGate the cosine-only gate of a phrase sharing no words with the graph
     *     (null: {@code gate} judges every phrase)
     * @param reading how a probability at even odds reads at the labelled data's prior
     *     ({@link #atPrior}; null reads the maps as fitted)
     */
    public Calibration(String model, Map<String, SourceMap> sources, int skip,
                       List<String> fittedOn, JsonNode measured, Gate gate, Gate foreignGate,
                       SourceMap reading) {
        this.model = model;
        this.sources = Collections.unmodifiableMap(new LinkedHashMap<>(sources));
        this.skip = skip;
        this.fittedOn = List.copyOf(fittedOn);
        this.measured = measured;
        this.gate = gate;
        this.foreignGate = foreignGate;
        this.reading = reading;
    }

    /** The embedding model's name. */
    public String model() {
        return model;
    }

    /** Source family to its logistic map, in the file's order. */
    public Map<String, SourceMap> sources() {
        return sources;
    }

    /** Best ranks left out of the background fit. */
    public int skip() {
        return skip;
    }

    /** What it was fitted on, for people. */
    public List<String> fittedOn() {
        return fittedOn;
    }

    /** What was measured when it was fitted, for people (null: nothing). */
    public JsonNode measured() {
        return measured;
    }

    /** The phrase gate (null: every phrase is taken to have a relevant fragment). */
    public Gate gate() {
        return gate;
    }

    /** The cosine-only gate of a phrase sharing no words with the graph (null: none). */
    public Gate foreignGate() {
        return foreignGate;
    }

    /** How a probability at even odds reads at the labelled data's prior (null: as fitted). */
    public SourceMap reading() {
        return reading;
    }

    /**
     * A probability at even prior odds read at the labelled data's prior: {@code reading} of
     * its logit (null: as it is); 0 and 1 kept.
     */
    public static double atPrior(double p, SourceMap reading) {
        if (reading == null || !(0.0 < p && p < 1.0)) {
            return p;
        }
        return reading.probability(Math.log(p) - Math.log1p(-p));
    }

    /**
     * The background of a phrase in one source from its unrestricted candidates' cosines (any
     * order; read best first) and the number of fragments the source holds: a least-squares
     * line of cosine against the normal quantile of the rank,
     * {@code cos_r ~ mu + sigma * z(1 - (r - 0.5) / size)}, over the ranks after the first
     * {@code min(skip, k / 4)}; with fewer than two points left, the mean of what there is with
     * {@link #MIN_SIGMA}. {@code share} is kept for the gate. The Java form of
     * {@code thalabus_graph.scoring.calibration.background}.
     */
    public static Background background(double[] cosines, long size, int skip, Double share) {
        List<Double> ranked = new ArrayList<>(cosines.length);
        for (double c : cosines) {
            ranked.add(c);
        }
        // Python's sorted(reverse=True): stable, equal values keep their order
        ranked.sort((a, b) -> a > b ? -1 : (a < b ? 1 : 0));
        int k = ranked.size();
        long n = Math.max(Math.max(size, k), 1);
        if (k == 0) {
            return new Background(0.0, MIN_SIGMA, n, null, share);
        }
        int first = Math.min(skip, k / 4);
        int m = k - first;
        if (m < 2) {
            double total = 0;
            for (double c : ranked) {
                total += c;
            }
            return new Background(total / k, MIN_SIGMA, n, ranked.get(0), share);
        }
        double[] xs = new double[m];
        double mx = 0;
        for (int i = 0; i < m; i++) {
            int r = first + 1 + i;
            xs[i] = NormalDist.invCdf(1.0 - (r - 0.5) / n);
            mx += xs[i];
        }
        mx = mx / m;
        double sxx = 0;
        double my = 0;
        for (int i = 0; i < m; i++) {
            sxx += (xs[i] - mx) * (xs[i] - mx);
            my += ranked.get(first + i);
        }
        my = my / m;
        double sigma = 0.0;
        if (sxx != 0) {
            double sxy = 0;
            for (int i = 0; i < m; i++) {
                sxy += (xs[i] - mx) * (ranked.get(first + i) - my);
            }
            sigma = sxy / sxx;
        }
        sigma = Python.max(sigma, MIN_SIGMA);
        return new Background(my - sigma * mx, sigma, n, ranked.get(0), share);
    }

    /**
     * {@code -log10(size * P(Z >= (cosine - mu) / sigma))}: how far a hit stands out from the
     * background, in orders of magnitude of the chance matches expected (increasing in
     * {@code cosine}); the tail is floored at 1e-300. The Java form of
     * {@code thalabus_graph.scoring.calibration.evidence}.
     */
    public static double evidence(double cosine, Background bg) {
        double z = (cosine - bg.mu()) / bg.sigma();
        double tail = Python.max(0.5 * Erfc.erfc(z / SQRT2), TAIL_FLOOR);
        return -Math.log10(bg.size() * tail);
    }

    /** The map of {@code source}, or the {@code default} one. */
    public SourceMap mapFor(String source) {
        SourceMap found = sources.get(source);
        if (found == null) {
            found = sources.get(DEFAULT_SOURCE);
        }
        if (found == null) {
            throw new CalibrationException("calibration of " + Python.repr(model)
                    + " has no map for " + Python.repr(source) + " and no '" + DEFAULT_SOURCE
                    + "' map", null);
        }
        return found;
    }

    /** {@link #background(double[], long, int, Double)} with this calibration's skip. */
    public Background background(double[] cosines, long size, Double share) {
        return background(cosines, size, skip, share);
    }

    /**
     * The calibrated score of a hit of {@code source} with this cosine against {@code bg}, in
     * [0, 1] and strictly increasing in {@code cosine}.
     */
    public double score(String source, double cosine, Background bg) {
        return scorer(source, bg).applyAsDouble(cosine);
    }

    /**
     * {@link #score} of every hit of {@code source} against {@code bg}, the map and the phrase's
     * gate read once: {@code (1 - RAW_WEIGHT) * atPrior(P * gate) + RAW_WEIGHT * (1 + cosine) / 2}.
     */
    public DoubleUnaryOperator scorer(String source, Background bg) {
        SourceMap mapped = mapFor(source);
        double gated = gateOf(bg);
        SourceMap read = reading;
        return cosine -> {
            double p = atPrior(mapped.probability(evidence(cosine, bg)) * gated, read);
            return (1.0 - RAW_WEIGHT) * p + RAW_WEIGHT * (1.0 + cosine) / 2.0;
        };
    }

    /**
     * The phrase gate of a background: 1.0 without a gate or a known best hit, or when a
     * candidate holds every word of the short phrase ({@code lexical}); else {@code gate} of the
     * best cosine and share, lifted to {@code foreignGate} of the best cosine for a
     * {@code foreign} phrase and to {@code foreignGate} of the best cosine in another language
     * ({@code other}), whichever is larger.
     */
    public double gateOf(Background bg) {
        if (gate == null || bg.best() == null || bg.lexical()) {
            return 1.0;
        }
        double own = gate.probability(bg.best(), bg.share());
        if (foreignGate != null) {
            if (bg.foreign()) {
                own = Python.max(own, foreignGate.probability(bg.best()));
            }
            if (bg.other() != null) {
                own = Python.max(own, foreignGate.probability(bg.other()));
            }
        }
        return own;
    }

    /**
     * Whether the phrase's language can change its gate: the foreign gate more lenient than the
     * gate by {@link #LANGUAGE_MATTERS} or more at this background (only then is the phrase's
     * language worth reading).
     */
    public boolean languageMatters(Background bg) {
        return gateOf(bg.withForeign(true)) - gateOf(bg) >= LANGUAGE_MATTERS;
    }

    /**
     * Calibrated scores of one source's unrestricted candidates (any order), their background
     * read from themselves and the phrase's lexical {@code share}.
     */
    public double[] scores(String source, double[] cosines, long size, Double share) {
        DoubleUnaryOperator scored = scorer(source, background(cosines, size, share));
        double[] out = new double[cosines.length];
        for (int i = 0; i < cosines.length; i++) {
            out[i] = scored.applyAsDouble(cosines[i]);
        }
        return out;
    }

    /** A calibration read from its JSON text, every field checked ({@link CalibrationFile}). */
    public static Calibration fromJson(String json) {
        return CalibrationFile.fromJson(json, "calibration");
    }

    /**
     * The calibration shipped for an embedding model, the class path resource
     * {@code /calibration/<name>.json} where name is the model's last path part
     * ({@code intfloat/multilingual-e5-small} reads {@code multilingual-e5-small.json}); null
     * when there is none.
     */
    public static Calibration shipped(String model) {
        Optional<Calibration> known = SHIPPED.get(model);
        if (known != null) {
            return known.orElse(null);
        }
        Calibration found = read(model);
        if (found != null) {  // only shipped names are kept: a caller's names would grow it
            SHIPPED.putIfAbsent(model, Optional.of(found));
        }
        return found;
    }

    /** The shipped calibrations read so far, by model name (each file is read once). */
    private static final Map<String, Optional<Calibration>> SHIPPED = new ConcurrentHashMap<>();

    private static Calibration read(String model) {
        int slash = model.lastIndexOf('/');
        String name = model.substring(slash + 1);
        if (name.isEmpty() || name.startsWith(".")) {
            return null;
        }
        try (InputStream in = Calibration.class.getResourceAsStream("/calibration/" + name + ".json")) {
            if (in == null) {
                return null;
            }
            return fromJson(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
