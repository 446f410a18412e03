package thalabus.procedures;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Transaction;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;

import thalabus.procedures.scoring.DroppedWarning;
import thalabus.procedures.scoring.Fragment;

/**
 * {@code thalabus.phraseResult(text, vector, options)}: {@code thalabus.phrase}'s answer as the
 * Python engine reads it, in one row of parallel lists (a few long lists decode far faster in
 * a driver than hundreds of rows), with what the engine learns from its own search statement:
 * the node counts, the embedding models of the stored vectors, the details of the best
 * {@code details} documents ({@link DocumentDetails}, so the engine reads nothing after the
 * call), the phrase's warning, which an emptied
 * phrase keeps too, and the hits of each search ({@code rows}: "semantic:chapters" ... as
 * profile shows them per step), and {@code language_matters}: whether the phrase's language
 * could change its gate, so that the engine reads the language only then (and asks again with
 * {@code held} false when the graph lacks it).
 */
public final class PhraseResult {
    @Context
    public Transaction tx;
    @Context
    public GraphDatabaseService db;

    /** The one row. */
    public static final class Row {
        public final List<String> fragmentids = new ArrayList<>();
        public final List<String> documentids = new ArrayList<>();
        public final List<String> sources = new ArrayList<>();
        public final List<String> texts = new ArrayList<>();
        public final List<Double> scores = new ArrayList<>();
        public final List<Double> raw_scores = new ArrayList<>();
        public final List<List<String>> contributions = new ArrayList<>();
        public final Map<String, Object> warning;
        public final Map<String, Object> sizes;
        public final List<String> models;
        public final Map<String, Object> rows = new LinkedHashMap<>();
        public final boolean language_matters;
        public final List<List<Object>> details;

        Row(PhrasePipeline.Result result, Transaction tx, long detailed) {
            for (Fragment f : result.fragments()) {
                fragmentids.add(f.fragmentid());
                documentids.add(f.documentid());
                sources.add(f.source());
                texts.add(f.text());
                scores.add(f.score());
                raw_scores.add(result.raw().getOrDefault(f.fragmentid(), f.score()));
                contributions.add(f.contributions());
            }
            details = detailed == 0 ? List.of() : DocumentDetails.of(tx,
                    DocumentDetails.best(result.fragments(), detailed), result.found().documents);
            language_matters = result.languageMatters();
            warning = warning(result.warning());
            sizes = new LinkedHashMap<>(result.found().sizes);
            models = List.copyOf(result.found().storedModels);
            result.found().semantic.forEach((source, hits) -> rows.put("semantic:" + source,
                    (long) hits.size()));
            result.found().text.forEach((source, hits) -> rows.put("text:" + source,
                    (long) hits.size()));
            if (result.restricted() != null) {
                result.restricted().searched.forEach((key, value) -> rows.put("filtered:" + key,
                        value));
            }
        }

        private static Map<String, Object> warning(DroppedWarning w) {
            if (w == null) {
                return null;
            }
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("phrase", w.phrase());
            out.put("dropped", (long) w.dropped());
            out.put("kept", (long) w.kept());
            out.put("best_cosine", w.bestCosine());
            out.put("rule", w.rule());
            out.put("message", w.message());
            return out;
        }
    }

    @Procedure(name = "thalabus.phraseResult", mode = Mode.READ)
    @Description("thalabus.phraseResult(text, vector, options, details): thalabus.phrase's "
            + "fragments in one row of parallel lists, with the node counts, the stored vectors' "
            + "models, the [documentid, properties, ontologyid, categories] of the best "
            + "`details` of its documents (-1: every one; 0: none), and the phrase's warning "
            + "(the engine's form).")
    public Stream<Row> phraseResult(@Name("text") String text,
                                    @Name(value = "vector", defaultValue = "null") List<Double> vector,
                                    @Name(value = "options", defaultValue = "{}") Map<String, Object> options,
                                    @Name(value = "details", defaultValue = "0") long details) {
        return Stream.of(new Row(PhrasePipeline.run(tx, db, text, vector, options), tx, details));
    }
}
