package thalabus.procedures;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Transaction;

import thalabus.procedures.fusion.Fragment;
import thalabus.procedures.fusion.FusionSettings;
import thalabus.procedures.fusion.Hits;
import thalabus.procedures.fusion.Hits.Hit;
import thalabus.procedures.fusion.Lucene;
import thalabus.procedures.fusion.PhraseFusion;
import thalabus.procedures.fusion.Texts;
import thalabus.procedures.scoring.Background;
import thalabus.procedures.scoring.Calibration;
import thalabus.procedures.scoring.Candidate;
import thalabus.procedures.scoring.Scale;
import thalabus.procedures.scoring.ScaleSettings;

/**
 * An unrestricted phrase from its search rows to its fused, calibrated fragments, in the order
 * the Python engine takes the same steps ({@code PhraseSearches.fragments} and
 * {@code SearchExecutor._run}): the pools' fragments and the fixed sample, the bottom of the
 * semantic range and the calibrated background from the sample, the language-slots rule fitted
 * on the sample, the pool fused by it, then the phrase's one calibrated scale.
 */
final class PhrasePipeline {
    /**
     * The phrase's fragments and, when the scale removed some, its warning (null: none);
     * {@code languageMatters}: the phrase was judged as held (no {@code held} option said
     * otherwise) and its language could change its gate ({@link Calibration#languageMatters}),
     * so a caller that finds it in a language the graph lacks asks again with {@code held}
     * false, as the engine reads a phrase's language only then.
     */
    record Result(List<thalabus.procedures.scoring.Fragment> fragments,
                  thalabus.procedures.scoring.DroppedWarning warning, Map<String, Double> raw,
                  PhraseSearch found, boolean languageMatters, RestrictedSearch restricted) {}

    private PhrasePipeline() {}

    /**
     * The phrase searched in {@code tx} with the engine's parameters
     * ({@code PhraseSearches.params}) and evaluated ({@link #evaluate}).
     *
     * @param db the caller's database, where a second transaction runs reads beside
     *     {@code tx}'s when {@code procedure_parallel_reads} allows ({@link Beside})
     * @param vector the query vector (null: embedded by the server's endpoint)
     * @param options {@code thalabus.phrase}'s options ({@link Options})
     */
    static Result run(Transaction tx, GraphDatabaseService db, String text, List<Double> vector, Map<String, Object> options) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("thalabus.phrase: the phrase text is empty");
        }
        Options opts = Options.of(options);
        EngineSettings settings = EngineSettings.of(opts.settings()).sized(opts.limit());
        int chars = text.codePointCount(0, text.length());
        if (chars > settings.integer("max_phrase_chars")) {
            throw new IllegalArgumentException("thalabus.phrase: the phrase has " + chars
                    + " characters; at most " + settings.integer("max_phrase_chars")
                    + " (max_phrase_chars), as the engine's query language allows");
        }
        List<Double> query = vector != null ? vector : QueryEmbedding.embed(text, settings);
        Beside beside = settings.flag("procedure_parallel_reads") ? Beside.of(tx, db) : null;
        Calibration calibration = opts.calibration(settings);
        boolean sampled = calibration != null || settings.text("fusion").equals("language-slots");
        int background = sampled ? Scale.BACKGROUND_TOP_N : 0;
        List<Map<String, Object>> vectorSearches = new ArrayList<>();
        for (String[] src : PhraseSearch.VECTOR_SOURCES) {
            int topN = settings.integer("top_n_" + src[0]);
            Map<String, Object> search = new LinkedHashMap<>();
            search.put("source", src[0]);
            search.put("index", src[1]);
            search.put("k", Math.max(settings.unfilteredK(topN), background > topN ? background : 0));
            search.put("top_n", topN);
            search.put("background", background > topN ? background : 0);
            vectorSearches.add(search);
        }
        boolean fuse = opts.withText(text, settings);
        String lucene = fuse ? Lucene.termsQuery(text) : "";
        List<String[]> textSources = lucene.isEmpty() ? List.of() : opts.textIndexes();
        List<Map<String, Object>> textSearches = new ArrayList<>();
        for (String[] src : textSources) {
            textSearches.add(Map.of("source", src[0], "index", src[1], "query", lucene,
                    "k", Math.max(settings.integer("top_n_text"), background)));
        }
        if (opts.filter() != null && !fuse) {
            throw new IllegalArgumentException("thalabus.phrase: a filtered phrase is "
                    + "fused with its full-text search (with_text must not be false)");
        }
        if (opts.filter() == null && opts.searches() != null) {
            throw new IllegalArgumentException("thalabus.phrase: option 'searches' plans a "
                    + "filtered phrase's searches: give 'filter' or 'documentids' too");
        }
        Beside.Task<RestrictedSearch> restricting = null;
        if (opts.filter() != null && beside != null) {
            Map<String, Long> sizes = PhraseSearch.sizes(tx);
            restricting = beside.start(other -> restrictedSearch(other, beside, query, opts,
                    settings, sizes, textSources, lucene));
        }
        PhraseSearch found = Beside.alongside(restricting, () -> PhraseSearch.run(tx, beside,
                query, vectorSearches, textSearches, settings.flag("vector_quantization"),
                settings.integer("max_result_text_chars"), Texts.plainWords(text)));
        RestrictedSearch restricted = opts.filter() == null ? null : restricting != null
                ? restricting.join()
                : restrictedSearch(tx, beside, query, opts, settings, found.sizes, textSources,
                        lucene);
        return evaluate(text, found, settings, calibration, Boolean.FALSE.equals(opts.held()),
                textSources, fuse, restricted, beside);
    }

    /** A filtered phrase's restricted searches in {@code tx} (their full-text searches
     *  {@code beside} it): the engine's plan, else {@link #exactPlan}. */
    private static RestrictedSearch restrictedSearch(Transaction tx, Beside beside,
                                                     List<Double> query, Options opts,
                                                     EngineSettings settings,
                                                     Map<String, Long> sizes,
                                                     List<String[]> textSources, String lucene) {
        List<RestrictedSearch.Planned> planned = opts.searches() != null ? opts.searches()
                : exactPlan(settings, sizes, textSources);
        return RestrictedSearch.run(tx, beside, query, opts.filter(), planned, lucene, sizes,
                settings);
    }

    /**
     * The searches of a filter given without the engine's plan (a call from Cypher): every
     * vector source searched exactly over the filter's documents, every full-text index's
     * best {@code index_max_k} hits looked up among their fragments; sources the graph lacks
     * are not searched.
     */
    private static List<RestrictedSearch.Planned> exactPlan(EngineSettings settings,
                                                            Map<String, Long> sizes,
                                                            List<String[]> textSources) {
        List<RestrictedSearch.Planned> out = new ArrayList<>();
        for (String[] src : PhraseSearch.VECTOR_SOURCES) {
            if (sizes.getOrDefault(src[0], 0L) > 0) {
                long topN = settings.integer("top_n_" + src[0]);
                out.add(new RestrictedSearch.Planned("exact", src[0], null, topN, topN, 0.0));
            }
        }
        for (String[] src : textSources) {
            if (sizes.getOrDefault(src[0], 0L) > 0) {
                out.add(new RestrictedSearch.Planned("candidates", src[0], src[1],
                        settings.integer("index_max_k"), 0, 0.0));
            }
        }
        return out;
    }

    /**
     * @param calibration the embedder's calibration (null: scores stay on the index scale)
     * @param foreign the phrase is in a language the graph's text does not hold
     * @param textSources (source, index) of the text searches that ran, in their order
     * @param fuse whether the phrase is fused with its text search (a phrase searched by
     *     meaning only goes from its semantic hits to the calibrated scale, as the engine's
     *     plan without a fusion step does)
     * @param restricted a filtered phrase's restricted hits (null: unfiltered): fused by the
     *     rule fitted on the unrestricted candidates, text scores divided by the unrestricted
     *     best, calibrated on the unrestricted background, as the engine's primed filtered
     *     phrase is ({@code SearchExecutor._run}), so a filter never changes a score
     * @param beside where the calibrated background is computed while the fusion runs (null:
     *     one after the other)
     */
    static Result evaluate(String phrase, PhraseSearch found, EngineSettings settings,
                           Calibration calibration, boolean foreign, List<String[]> textSources,
                           boolean fuse, RestrictedSearch restricted, Beside beside) {
        Map<String, Object> values = new java.util.HashMap<>(settings.asMap());
        values.put("calibrated", calibration != null);
        FusionSettings fs = FusionSettings.fromMap(values);
        int background = calibration != null || fs.fusion().equals("language-slots")
                ? Scale.BACKGROUND_TOP_N : 0;
        List<Fragment> semantic = new ArrayList<>();
        List<Fragment> sampledSemantic = new ArrayList<>();
        for (String[] src : PhraseSearch.VECTOR_SOURCES) {
            List<Hit> hits = found.semantic.get(src[0]);
            if (hits == null || found.sizes.getOrDefault(src[0], 0L) == 0) {
                continue;
            }
            semantic.addAll(Hits.semanticFragments(fs, src[0], hits));
            if (background > 0) {
                List<Hit> drawn = new ArrayList<>(hits);
                drawn.addAll(found.beyondHits.getOrDefault(src[0], List.of()));
                sampledSemantic.addAll(Hits.semanticFragments(fs, src[0],
                        drawn.subList(0, Math.min(background, drawn.size()))));
            }
        }
        semantic = Fragment.sorted(semantic);
        List<Fragment> text = new ArrayList<>();
        List<Fragment> sampledText = new ArrayList<>();
        Map<String, Double> best = new java.util.HashMap<>();
        for (String[] src : textSources) {
            List<Hit> hits = found.text.get(src[0]);
            if (hits == null || found.sizes.getOrDefault(src[0], 0L) == 0) {
                continue;
            }
            hits = new ArrayList<>(hits);
            hits.sort(Comparator.comparingDouble((Hit h) -> -h.score())
                    .thenComparing(Hit::fragmentid, Texts.CODE_POINT_ORDER));
            double top = hits.isEmpty() ? 0.0 : hits.get(0).score();
            best.put(src[0], top);
            text.addAll(Hits.textFragments(fs, src[0], hits, top, null));
            sampledText.addAll(Hits.textFragments(fs, src[0], hits, top,
                    Math.max(fs.topNText(), background)));
        }
        PhraseFusion.Candidates sample = background > 0
                ? new PhraseFusion.Candidates(Fragment.sorted(sampledSemantic), sampledText)
                : new PhraseFusion.Candidates(semantic, text);
        List<Candidate> beyond = new ArrayList<>();
        for (PhraseSearch.Beyond b : found.beyond) {
            beyond.add(new Candidate(b.source(), b.score(), b.text(), b.language()));
        }
        PhraseFusion fusion = new PhraseFusion(fs);
        fusion.semanticScale = calibration != null;
        fusion.languages.putAll(found.languages);
        fusion.sharedWords.putAll(found.sharedWords);
        fusion.unrestricted.put(phrase, sample);
        List<thalabus.procedures.scoring.Fragment> scoringSemantic = toScoring(semantic);
        if (calibration != null) {
            List<Candidate> drawn = Scale.sample(scoringSemantic, beyond, found.languages);
            if (!drawn.isEmpty()) {
                double low = drawn.get(0).score();
                for (Candidate c : drawn) {
                    low = Math.min(low, c.score());
                }
                fusion.lows.put(phrase, low);
            }
        }
        fusion.rememberRange(phrase, sample.semantic());
        List<thalabus.procedures.scoring.Fragment> sampleText = toScoring(sample.text());
        java.util.function.Supplier<Background> remember = () -> calibration == null ? null
                : Scale.remember(calibration, phrase, scoringSemantic, found.sizes, beyond,
                        sampleText, found.languages, foreign);
        Beside.Task<Background> remembering = beside == null || calibration == null ? null
                : beside.compute(remember);
        List<Fragment> fused;
        if (restricted != null) {
            List<Fragment> kept = new ArrayList<>();
            for (String[] src : PhraseSearch.VECTOR_SOURCES) {
                List<Hit> hits = restricted.semantic.get(src[0]);
                if (hits != null && found.sizes.getOrDefault(src[0], 0L) > 0) {
                    kept.addAll(Hits.semanticFragments(fs, src[0], hits));
                }
            }
            List<Fragment> keptText = new ArrayList<>();
            for (String[] src : textSources) {
                List<Hit> hits = restricted.text.get(src[0]);
                if (hits != null && found.sizes.getOrDefault(src[0], 0L) > 0) {
                    keptText.addAll(Hits.textFragments(fs, src[0], hits,
                            best.getOrDefault(src[0], 0.0), null));
                }
            }
            fused = fusion.fuse(phrase, Fragment.sorted(kept), keptText, true, null);
        } else {
            fused = fuse ? fusion.fuse(phrase, semantic, text, false, null) : semantic;
        }
        Background bg = remembering == null ? remember.get() : remembering.join();
        boolean matters = bg != null && !bg.foreign() && calibration.languageMatters(bg);
        Map<String, Double> raw = new java.util.HashMap<>();
        fused.forEach(f -> raw.put(f.fragmentid(), f.score()));
        if (calibration == null) {
            return new Result(toScoring(fused), null, raw, found, false, restricted);
        }
        Scale.Applied applied = Scale.apply(calibration, scaleSettings(settings), phrase, bg,
                toScoring(fused));
        return new Result(applied.fragments(), applied.warning(), raw, found, matters,
                restricted);
    }

    private static ScaleSettings scaleSettings(EngineSettings settings) {
        Map<String, Number> fields = new java.util.HashMap<>();
        for (Map.Entry<String, Object> e : settings.asMap().entrySet()) {
            if (e.getValue() instanceof Number n && (e.getKey().startsWith("score_factor_")
                    || e.getKey().startsWith("score_cap_") || e.getKey().equals("min_score"))) {
                fields.put(e.getKey(), n);
            }
        }
        return ScaleSettings.of(fields);
    }

    private static List<thalabus.procedures.scoring.Fragment> toScoring(List<Fragment> fragments) {
        List<thalabus.procedures.scoring.Fragment> out = new ArrayList<>(fragments.size());
        for (Fragment f : fragments) {
            out.add(new thalabus.procedures.scoring.Fragment(f.fragmentid(), f.documentid(),
                    f.text(), f.score(), f.source(), f.contributions()));
        }
        return out;
    }
}
