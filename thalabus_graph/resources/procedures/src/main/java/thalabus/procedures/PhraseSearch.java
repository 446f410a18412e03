package thalabus.procedures;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.neo4j.graphdb.Direction;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Relationship;
import org.neo4j.graphdb.RelationshipType;
import org.neo4j.graphdb.ResourceIterable;
import org.neo4j.graphdb.Result;
import thalabus.procedures.fusion.Fusion;
import thalabus.procedures.fusion.Hits.Hit;
import org.neo4j.graphdb.Transaction;

/**
 * One phrase's unrestricted searches inside the server: the engine's {@code search_phrase_nodes}
 * statement (the build copies it into the jar), {@code search_phrase}'s searches yielding hit
 * nodes, run in the caller's transaction; its rows read into hits per search (each hit's
 * properties read from its node), the candidates beyond the pools, the node counts and the
 * documents' stored languages, as {@code thalabus_graph.search.phrase.PhraseSearches} reads
 * {@code search_phrase}'s rows.
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

    /** A candidate beyond a source's pool: its score, text and document language. */
    record Beyond(String source, double score, String text, String language) {}

    final Map<String, Long> sizes = new HashMap<>();
    final List<String> storedModels = new ArrayList<>();
    final Map<String, List<Hit>> semantic = new LinkedHashMap<>();
    final Map<String, List<Hit>> text = new LinkedHashMap<>();
    final Map<String, List<Hit>> beyondHits = new LinkedHashMap<>();
    final List<Beyond> beyond = new ArrayList<>();
    final Map<String, String> languages = new HashMap<>();
    /** Each full-text hit's text (this very string) to the phrase's words found in it
     *  ({@link Fusion#sharedWords}), when the full-text searches ran beside the vector ones:
     *  the fusion reads them instead of searching the text again on the caller's thread. */
    final Map<String, Set<String>> sharedWords = new IdentityHashMap<>();
    /** The Document node of each document id a hit named (null: no Document holds it). */
    final Map<String, Node> documents = new HashMap<>();
    /** {@link #documents} as element ids, once the transaction that read them has ended. */
    private final Map<String, String> documentElements = new HashMap<>();

    private PhraseSearch() {}

    /**
     * Run the statement with the engine's parameters ({@code PhraseSearches.params}):
     * {@code vectorSearches} ({source, index, k, top_n, background}) and {@code textSearches}
     * ({source, index, query, k}); each hit's properties are read from its node
     * ({@link Reader}). With {@code beside} (null: none) the full-text searches run in a
     * transaction of their own while this one runs the vector searches ({@link Beside}), and
     * find {@code phraseWords} in their hits' texts there ({@link #sharedWords}).
     */
    static PhraseSearch run(Transaction tx, Beside beside, List<Double> vector,
                            List<Map<String, Object>> vectorSearches,
                            List<Map<String, Object>> textSearches, boolean rescore, int maxText,
                            Set<String> phraseWords) {
        Beside.Task<PhraseSearch> text = beside == null || vectorSearches.isEmpty()
                || textSearches.isEmpty() ? null
                : beside.start(other -> detached(search(other, vector, List.of(), textSearches,
                        rescore, maxText)).found(phraseWords));
        if (text == null) {
            return search(tx, vector, vectorSearches, textSearches, rescore, maxText);
        }
        PhraseSearch out = Beside.alongside(text, () -> search(tx, vector, vectorSearches,
                List.of(), rescore, maxText));
        out.adopt(text.join(), tx);
        return out;
    }

    /** The graph's node counts per kind ("documents", "chapters", ...), as {@link #run}
     *  reads them, for searches that start before it. */
    static Map<String, Long> sizes(Transaction tx) {
        return search(tx, null, List.of(), List.of(), false, 0).sizes;
    }

    private static PhraseSearch search(Transaction tx, List<Double> vector,
                                       List<Map<String, Object>> vectorSearches,
                                       List<Map<String, Object>> textSearches, boolean rescore,
                                       int maxText) {
        Map<String, Object> params = new HashMap<>();
        params.put("vector", vector);
        params.put("vector_searches", vectorSearches);
        params.put("text_searches", textSearches);
        params.put("rescore", rescore);
        PhraseSearch out = new PhraseSearch();
        Reader reader = new Reader(tx, maxText, out.languages, out.documents);
        try (Result rows = tx.execute(Statements.text("search_phrase_nodes"), params)) {
            while (rows.hasNext()) {
                out.read(rows.next(), reader);
            }
        }
        return out;
    }

    /** The search with its Document nodes named by element id (a node belongs to the
     *  transaction that read it; {@link #adopt} finds them again in the caller's). */
    private static PhraseSearch detached(PhraseSearch search) {
        search.documents.forEach((documentid, node) ->
                search.documentElements.put(documentid, node == null ? null : node.getElementId()));
        search.documents.clear();
        return search;
    }

    /** The phrase's words found in each full-text hit's text, on this thread
     *  ({@link #sharedWords}). */
    private PhraseSearch found(Set<String> phraseWords) {
        for (List<Hit> hits : text.values()) {
            for (Hit hit : hits) {
                if (hit.text() != null) {
                    sharedWords.put(hit.text(), Fusion.sharedWords(phraseWords, hit.text()));
                }
            }
        }
        return this;
    }

    /** Takes the full-text hits, languages and documents another transaction read (its
     *  node counts are this search's too, counted by the same statement). */
    private void adopt(PhraseSearch other, Transaction tx) {
        text.putAll(other.text);
        sharedWords.putAll(other.sharedWords);
        other.languages.forEach(languages::putIfAbsent);
        other.documentElements.forEach((documentid, element) -> {
            if (!documents.containsKey(documentid)) {
                documents.put(documentid, element == null ? null : tx.getNodeByElementId(element));
            }
        });
    }

    /**
     * Reads hits as {@code search_phrase} returns them: a node's {@code fragmentid},
     * {@code documentid} and {@code text} cut to {@code maxText} code points (Cypher's
     * {@code left}), and its document's stored language, looked up once per document id
     * into {@code languages} (the unique {@code documentid} of a {@code Document}, reached
     * through the hit's {@code IN_DOCUMENT} relationship when it leads there; none for a
     * missing document), the Document nodes kept in {@code documents} for their details.
     */
    static final class Reader {
        private static final Label DOCUMENT = Label.label("Document");
        private static final RelationshipType IN_DOCUMENT = RelationshipType.withName("IN_DOCUMENT");
        private final Transaction tx;
        private final int maxText;
        private final Map<String, String> languages;
        private final Map<String, Node> documents;

        Reader(Transaction tx, int maxText, Map<String, String> languages,
               Map<String, Node> documents) {
            this.tx = tx;
            this.maxText = maxText;
            this.languages = languages;
            this.documents = documents;
        }

        Hit hit(Node node, double score) {
            Map<String, Object> read = node.getProperties("fragmentid", "documentid", "text");
            Object text = read.get("text");
            return new Hit((String) read.get("fragmentid"), (String) read.get("documentid"),
                    text == null ? null : cut(text.toString(), maxText), score);
        }

        /** The stored language of the document {@code documentid}, reached from the hit node
         *  {@code from} through its {@code IN_DOCUMENT} relationship when that document holds
         *  the id (one step instead of an index seek), else found by its unique id. */
        String language(String documentid, Node from) {
            if (documentid == null) {
                return null;
            }
            if (languages.containsKey(documentid)) {
                return languages.get(documentid);
            }
            Node document = documentOf(from, documentid);
            if (document == null) {
                document = tx.findNode(DOCUMENT, "documentid", documentid);
            }
            String language = document == null ? null
                    : stored(document.getProperty("language", null));
            languages.put(documentid, language);
            documents.put(documentid, document);
            return language;
        }

        private static Node documentOf(Node from, String documentid) {
            try (ResourceIterable<Relationship> out = from.getRelationships(Direction.OUTGOING, IN_DOCUMENT)) {
                for (Relationship r : out) {
                    Node end = r.getEndNode();
                    if (end.hasLabel(DOCUMENT) && documentid.equals(end.getProperty("documentid", null))) {
                        return end;
                    }
                }
            }
            return null;
        }
    }

    /** Cypher's {@code left(text, n)}: the first {@code n} code points. */
    static String cut(String text, int n) {
        if (text.length() <= n) {
            return text;
        }
        int points = text.codePointCount(0, text.length());
        return points <= n ? text : text.substring(0, text.offsetByCodePoints(0, n));
    }

    @SuppressWarnings("unchecked")
    private void read(Map<String, Object> row, Reader reader) {
        String kind = (String) row.get("kind");
        String source = (String) row.get("source");
        List<Object> scores = (List<Object>) row.get("scores");
        if ("size".equals(kind)) {
            for (Object m : (List<Object>) row.get("models")) {
                storedModels.add(String.valueOf(m));
            }
            List<Object> names = (List<Object>) row.get("names");
            for (int i = 0; i < names.size(); i++) {
                sizes.put((String) names.get(i), ((Number) scores.get(i)).longValue());
            }
            return;
        }
        List<Object> nodes = (List<Object>) row.get("nodes");
        List<Hit> hits = new ArrayList<>(nodes.size());
        for (int i = 0; i < nodes.size(); i++) {
            Node node = (Node) nodes.get(i);
            Hit hit = reader.hit(node, ((Number) scores.get(i)).doubleValue());
            hits.add(hit);
            reader.language(hit.documentid(), node);
        }
        switch (kind) {
            case "background" -> {
                for (Hit hit : hits) {
                    beyond.add(new Beyond(source, hit.score(), hit.text(),
                            languages.get(hit.documentid())));
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
}
