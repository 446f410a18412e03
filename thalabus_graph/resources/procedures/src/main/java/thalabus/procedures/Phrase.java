package thalabus.procedures;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Result;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Transaction;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;


/**
 * {@code thalabus.phrase(text, vector, options)}: one semantic phrase searched, fused and
 * calibrated inside the server exactly as the engine's phrase is, yielding each fragment node
 * with its scores. Options (all optional): {@code limit} (the results the caller wants; sizes
 * the pools as {@code query(limit=...)} does, never the scores), {@code language} (the
 * phrase's ISO 639-1 code: its per-language full-text indexes), {@code text_indexes} (a list
 * of [source, index] pairs, instead of {@code language}), {@code held} (false: the phrase's
 * language is not held by the graph's text), {@code with_text} (false: no full-text search),
 * {@code calibration} (a shipped model name, or "none" for the index scale), {@code settings}
 * (engine settings by their Python names, e.g. {fusion: 'convex'}). {@code vector} may be null
 * when the server knows an embedding endpoint ({@link QueryEmbedding}).
 */
public final class Phrase {
    @Context
    public Transaction tx;
    @Context
    public GraphDatabaseService db;

    /** One fused, calibrated fragment of the phrase. */
    public static final class Row {
        public final Node fragment;
        public final String fragmentid;
        public final String documentid;
        public final String source;
        public final double score;
        public final double raw_score;
        public final List<String> contributions;
        public final String text;
        public final String warning;

        Row(Node fragment, thalabus.procedures.scoring.Fragment f, double raw, String warning) {
            this.fragment = fragment;
            this.fragmentid = f.fragmentid();
            this.documentid = f.documentid();
            this.source = f.source();
            this.score = f.score();
            this.raw_score = raw;
            this.contributions = f.contributions();
            this.text = f.text();
            this.warning = warning;
        }
    }

    @Procedure(name = "thalabus.phrase", mode = Mode.READ)
    @Description("thalabus.phrase(text, vector, options): one phrase's semantic and full-text "
            + "searches over every source, fused and calibrated as the thalabus-graph engine "
            + "does; yields fragment, fragmentid, documentid, source, score, raw_score, "
            + "contributions, text, warning.")
    public Stream<Row> phrase(@Name("text") String text,
                              @Name(value = "vector", defaultValue = "null") List<Double> vector,
                              @Name(value = "options", defaultValue = "{}") Map<String, Object> options) {
        PhrasePipeline.Result result = PhrasePipeline.run(tx, db, text, vector, options);
        return rows(result);
    }

    private Stream<Row> rows(PhrasePipeline.Result result) {
        Map<String, Node> nodes = nodes(result.fragments());
        String warning = result.warning() == null ? null : result.warning().message();
        List<Row> out = new ArrayList<>();
        for (thalabus.procedures.scoring.Fragment f : result.fragments()) {
            out.add(new Row(nodes.get(f.fragmentid()), f,
                    result.raw().getOrDefault(f.fragmentid(), f.score()), warning));
        }
        return out.stream();
    }

    /** The fragments' nodes, one unique-index lookup each, a statement per label. */
    private Map<String, Node> nodes(List<thalabus.procedures.scoring.Fragment> fragments) {
        Map<String, List<String>> byLabel = new HashMap<>();
        for (thalabus.procedures.scoring.Fragment f : fragments) {
            byLabel.computeIfAbsent(Statements.LABELS.getOrDefault(f.source(), "Fragment"),
                    l -> new ArrayList<>()).add(f.fragmentid());
        }
        Map<String, Node> out = new HashMap<>();
        for (Map.Entry<String, List<String>> e : byLabel.entrySet()) {
            String statement = "UNWIND $ids AS id MATCH (f:" + e.getKey()
                    + " {fragmentid: id}) RETURN id, f";
            try (Result rows = tx.execute(statement, Map.of("ids", e.getValue()))) {
                while (rows.hasNext()) {
                    Map<String, Object> row = rows.next();
                    out.put((String) row.get("id"), (Node) row.get("f"));
                }
            }
        }
        return out;
    }
}
