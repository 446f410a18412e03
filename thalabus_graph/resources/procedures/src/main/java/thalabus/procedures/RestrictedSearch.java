package thalabus.procedures;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.neo4j.graphdb.Result;
import org.neo4j.graphdb.Transaction;

import thalabus.procedures.fusion.Hits.Hit;
import thalabus.procedures.fusion.Texts;

/**
 * A filtered phrase's restricted searches inside the server: the engine's
 * {@code search_phrase_filtered} statement (the build copies it into the jar, unscoped), run
 * with a {@link Filter}'s restriction and the searches the engine's plan chose for it
 * ({@code plan.searches.phrase_plan}: each vector source on the exact or the over-fetched index
 * path with its {@code k}, each full-text index checking the restriction on its hits or
 * looking them up among the restricted documents' fragments), read as
 * {@code search.vector.VectorSearches} and {@code search.text.TextSearches} read the same rows:
 * an over-fetched index search that fell short of its pool is asked again with twice the
 * {@code k}, or exactly when that would not pay ({@code plan.cost.next_overfetch}).
 */
final class RestrictedSearch {
    /** One planned search: {@code kind} exact, index, text (the restriction checked on each
     *  hit) or candidates; {@code walked} what exact search would walk (for the over-fetch). */
    record Planned(String kind, String source, String index, long k, long topN, double walked) {}

    private static final Map<String, String> VECTOR_INDEX = new HashMap<>();

    static {
        for (String[] src : PhraseSearch.VECTOR_SOURCES) {
            VECTOR_INDEX.put(src[0], src[1]);
        }
    }

    /** Each vector source's restricted hits, best first (the pool the plan keeps). */
    final Map<String, List<Hit>> semantic = new LinkedHashMap<>();
    /** Each full-text source's restricted hits, best first. */
    final Map<String, List<Hit>> text = new LinkedHashMap<>();
    /** What each search did, as profile shows it: its hits ({@code semantic:chapters} ...),
     *  an over-fetch's last {@code k} ({@code k:semantic:chapters}) and an exact fallback
     *  ({@code path:semantic:chapters}). */
    final Map<String, Object> searched = new LinkedHashMap<>();

    private RestrictedSearch() {}

    /**
     * The planned searches run with {@code filter}'s restriction: the first call runs all of
     * them, a short over-fetch its own calls after.
     *
     * @param beside where the full-text searches run while {@code tx} runs the vector
     *     searches (null: one after the other; {@link Beside})
     * @param query the phrase's Lucene query (its full-text searches ask it)
     * @param sizes the graph's fragments per source (an index holding fewer returns them all)
     */
    static RestrictedSearch run(Transaction tx, Beside beside, List<Double> vector, Filter filter,
                                List<Planned> searches, String query, Map<String, Long> sizes,
                                EngineSettings settings) {
        RestrictedSearch out = new RestrictedSearch();
        Map<String, Object> base = new HashMap<>(filter.parameters());
        base.put("vector", vector);
        base.put("vector_searches", List.of());
        base.put("text_searches", List.of());
        base.put("rescore", settings.flag("vector_quantization"));
        base.put("details", false);
        base.put("exact_details", false);
        base.put("max_text", (long) settings.integer("max_result_text_chars"));
        List<Map<String, Object>> exact = new ArrayList<>();
        List<Map<String, Object>> index = new ArrayList<>();
        List<Map<String, Object>> texts = new ArrayList<>();
        List<Map<String, Object>> candidates = new ArrayList<>();
        for (Planned s : searches) {
            switch (s.kind()) {
                case "exact" -> exact.add(exactSearch(s.source(), s.topN()));
                case "index" -> index.add(indexSearch(s.source(), s.k(), s.topN(), sizes));
                case "text" -> texts.add(textSearch(s, query));
                case "candidates" -> {
                    Map<String, Object> t = textSearch(s, query);
                    t.put("label", Statements.LABELS.get(s.source()));
                    candidates.add(t);
                }
                default -> throw new IllegalArgumentException(
                        "thalabus.phrase: unknown search kind '" + s.kind() + "'");
            }
        }
        Beside.Task<Map<String, List<Hit>>> textRows = beside == null
                || (exact.isEmpty() && index.isEmpty()) || (texts.isEmpty() && candidates.isEmpty())
                ? null : beside.start(other -> out.call(other, base, List.of(), List.of(), texts,
                        candidates));
        Map<String, List<Hit>> rows;
        if (textRows == null) {
            rows = out.call(tx, base, exact, index, texts, candidates);
        } else {
            rows = new HashMap<>(Beside.alongside(textRows, () -> out.call(tx, base, exact,
                    index, List.of(), List.of())));
            rows.putAll(textRows.join());
        }
        for (Planned s : searches) {
            String key = (s.kind().equals("exact") || s.kind().equals("index") ? "semantic:"
                    : "text:") + s.source();
            List<Hit> hits = rows.getOrDefault(key, List.of());
            if (s.kind().equals("index")) {
                hits = out.overfetched(tx, base, s, hits, sizes.getOrDefault(s.source(), 0L),
                        settings);
            } else if (!s.kind().equals("exact")) {
                hits = new ArrayList<>(hits);
                hits.sort(BEST_FIRST);
            }
            (key.startsWith("semantic:") ? out.semantic : out.text).put(s.source(), hits);
            out.searched.put(key, (long) hits.size());
        }
        return out;
    }

    private static final Comparator<Hit> BEST_FIRST = Comparator
            .comparingDouble((Hit h) -> -h.score())
            .thenComparing(Hit::fragmentid, Texts.CODE_POINT_ORDER);

    /** {@code VectorSearches._index}: the best {@code top_n} of an index search that kept
     *  enough hits (or asked the whole index), else asked again. */
    private List<Hit> overfetched(Transaction tx, Map<String, Object> base, Planned s,
                                  List<Hit> first, long total, EngineSettings settings) {
        List<Hit> hits = first;
        long k = s.k();
        while (hits.size() < s.topN() && k < total) {
            Long again = nextOverfetch(settings, k, hits.size(), s.topN(), s.walked());
            String key = "semantic:" + s.source();
            if (again == null) {
                searched.put("path:" + key, "exact");
                return call(tx, base, List.of(exactSearch(s.source(), s.topN())), List.of(),
                        List.of(), List.of()).getOrDefault(key, List.of());
            }
            k = again;
            searched.put("k:" + key, k);
            hits = call(tx, base, List.of(), List.of(indexSearch(s.source(), k, s.topN(), Map.of(
                    s.source(), total))), List.of(), List.of()).getOrDefault(key, List.of());
        }
        List<Hit> sorted = new ArrayList<>(hits);
        sorted.sort(BEST_FIRST);
        return sorted.subList(0, (int) Math.min(sorted.size(), s.topN()));
    }

    /** {@code cost.next_overfetch}: twice {@code k}, or null for exact search. */
    static Long nextOverfetch(EngineSettings settings, long k, int hits, long topN, double walked) {
        if (k * 2 > settings.integer("index_max_k")
                || (double) k * topN / Math.max(hits, 1) >= walked) {
            return null;
        }
        return k * 2;
    }

    private static Map<String, Object> exactSearch(String source, long topN) {
        Map<String, Object> out = new HashMap<>();
        out.put("source", source);
        out.put("label", Statements.LABELS.get(source));
        out.put("k", topN);
        return out;
    }

    private static Map<String, Object> indexSearch(String source, long k, long topN,
                                                   Map<String, Long> sizes) {
        Map<String, Object> out = new HashMap<>();
        out.put("source", source);
        out.put("index", VECTOR_INDEX.get(source));
        out.put("k", Math.min(k, sizes.getOrDefault(source, 0L)));
        out.put("top_n", topN);
        return out;
    }

    private static Map<String, Object> textSearch(Planned s, String query) {
        Map<String, Object> out = new HashMap<>();
        out.put("source", s.source());
        out.put("index", s.index());
        out.put("query", query);
        out.put("k", s.k());
        return out;
    }

    /** One run of the statement: each search's hits by "semantic:source" / "text:source". */
    @SuppressWarnings("unchecked")
    private Map<String, List<Hit>> call(Transaction tx, Map<String, Object> base,
                                        List<Map<String, Object>> exact,
                                        List<Map<String, Object>> index,
                                        List<Map<String, Object>> texts,
                                        List<Map<String, Object>> candidates) {
        Map<String, Object> params = new HashMap<>(base);
        params.put("exact_searches", exact);
        params.put("index_searches", index);
        params.put("filtered_texts", texts);
        params.put("candidate_texts", candidates);
        Map<String, List<Hit>> out = new HashMap<>();
        try (Result rows = tx.execute(Statements.text("search_phrase_filtered"), params)) {
            while (rows.hasNext()) {
                Map<String, Object> row = rows.next();
                String kind = (String) row.get("kind");
                if ("size".equals(kind)) {
                    continue;
                }
                List<Object> ids = (List<Object>) row.get("fragmentids");
                List<Object> documents = (List<Object>) row.get("documentids");
                List<Object> found = (List<Object>) row.get("texts");
                List<Object> scores = (List<Object>) row.get("scores");
                List<Hit> hits = new ArrayList<>(ids.size());
                for (int i = 0; i < ids.size(); i++) {
                    Object t = found.get(i);
                    hits.add(new Hit((String) ids.get(i), (String) documents.get(i),
                            t == null ? null : t.toString(), ((Number) scores.get(i)).doubleValue()));
                }
                String prefix = kind.equals("filtered_text") ? "text:" : "semantic:";
                out.computeIfAbsent(prefix + row.get("source"), x -> new ArrayList<>()).addAll(hits);
            }
        }
        return out;
    }
}
