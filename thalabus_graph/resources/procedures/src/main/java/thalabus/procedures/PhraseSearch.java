package thalabus.procedures;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.neo4j.graphdb.Result;
import thalabus.procedures.fusion.Hits.Hit;
import org.neo4j.graphdb.Transaction;

/**
 * One phrase's unrestricted searches inside the server: the engine's own {@code search_phrase}
 * statement (the build copies it, rendered, into the jar), run in the caller's transaction,
 * its rows read into hits per search, the candidates beyond the pools, the node counts and
 * the documents' stored languages, as {@code thalabus_graph.search.phrase.PhraseSearches}
 * reads them.
 */
final class PhraseSearch {
    /** The vector sources: (source, index), in the engine's order ({@code VECTOR_SOURCES}). */
    static final String[][] VECTOR_SOURCES = {
        {"chapters", "typical_rag"}, {"paragraphs", "paragraphs"},
        {"summaries", "summaries"}, {"questions", "questions"},
    };
    /** The language-neutral full-text sources: (source, index) ({@code TEXT_SOURCES}). */
    static final String[][] TEXT_SOURCES = {
        {"chapters", "chapters_fulltext"}, {"keywords", "keywords_fulltext"},
    };
    private static volatile String statement;

    /** A candidate beyond a source's pool: its score, text and document language. */
    record Beyond(String source, double score, String text, String language) {}

    final Map<String, Long> sizes = new HashMap<>();
    final List<String> storedModels = new ArrayList<>();
    final Map<String, List<Hit>> semantic = new LinkedHashMap<>();
    final Map<String, List<Hit>> text = new LinkedHashMap<>();
    final Map<String, List<Hit>> beyondHits = new LinkedHashMap<>();
    final List<Beyond> beyond = new ArrayList<>();
    final Map<String, String> languages = new HashMap<>();

    private PhraseSearch() {}

    /**
     * Run the statement with the engine's parameters ({@code PhraseSearches.params}):
     * {@code vectorSearches} ({source, index, k, top_n, background}) and {@code textSearches}
     * ({source, index, query, k}).
     */
    static PhraseSearch run(Transaction tx, List<Double> vector, List<Map<String, Object>> vectorSearches,
                            List<Map<String, Object>> textSearches, boolean rescore, int maxText) {
        Map<String, Object> params = new HashMap<>();
        params.put("vector", vector);
        params.put("vector_searches", vectorSearches);
        params.put("text_searches", textSearches);
        params.put("rescore", rescore);
        params.put("ontologyid", null);
        params.put("details", false);
        params.put("max_text", maxText);
        PhraseSearch out = new PhraseSearch();
        try (Result rows = tx.execute(statement(), params)) {
            while (rows.hasNext()) {
                out.read(rows.next());
            }
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private void read(Map<String, Object> row) {
        String kind = (String) row.get("kind");
        String source = (String) row.get("source");
        List<Object> ids = (List<Object>) row.get("fragmentids");
        List<Object> docs = (List<Object>) row.get("documentids");
        List<Object> texts = (List<Object>) row.get("texts");
        List<Object> scores = (List<Object>) row.get("scores");
        List<Object> langs = (List<Object>) row.get("languages");
        if ("size".equals(kind)) {
            for (Object m : docs) {
                storedModels.add(String.valueOf(m));
            }
            for (int i = 0; i < ids.size(); i++) {
                sizes.put((String) ids.get(i), ((Number) scores.get(i)).longValue());
            }
            sizes.remove("ontology");
            return;
        }
        for (int i = 0; i < docs.size(); i++) {
            languages.put((String) docs.get(i), stored(langs.get(i)));
        }
        List<Hit> hits = new ArrayList<>(ids.size());
        for (int i = 0; i < ids.size(); i++) {
            hits.add(new Hit((String) ids.get(i), (String) docs.get(i), (String) texts.get(i),
                    ((Number) scores.get(i)).doubleValue()));
        }
        switch (kind) {
            case "background" -> {
                for (int i = 0; i < hits.size(); i++) {
                    beyond.add(new Beyond(source, hits.get(i).score(), hits.get(i).text(),
                            stored(langs.get(i))));
                }
                beyondHits.put(source, hits);
            }
            case "semantic" -> semantic.put(source, hits);
            default -> text.put(source, hits);
        }
    }

    /** A stored language as the fusion sees it: null when missing or empty. */
    static String stored(Object value) {
        return value == null || value.toString().isEmpty() ? null : value.toString();
    }

    private static String statement() {
        String known = statement;
        if (known == null) {
            try (InputStream in = PhraseSearch.class.getResourceAsStream("/cypher/search_phrase.cypher")) {
                if (in == null) {
                    throw new IllegalStateException("the plugin jar lacks cypher/search_phrase.cypher");
                }
                known = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            statement = known;
        }
        return known;
    }
}
