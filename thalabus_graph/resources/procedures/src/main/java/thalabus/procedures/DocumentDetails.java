package thalabus.procedures;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.neo4j.graphdb.Direction;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Relationship;
import org.neo4j.graphdb.RelationshipType;
import org.neo4j.graphdb.ResourceIterable;
import org.neo4j.graphdb.Transaction;

import thalabus.procedures.fusion.Texts;
import thalabus.procedures.scoring.Fragment;

/**
 * The details of the documents a phrase returns, as the engine's {@code document_details}
 * statement reads them: {@code [documentid, properties, ontologyid, categories]} each, the
 * properties all of the Document node's, the ontology its first {@code IN_ONTOLOGY} one's id,
 * the categories {@code {name, value}} of every {@code HAS_CATEGORY} Category. Read through the
 * procedure API in the call that found the documents, so the engine needs no statement after
 * it; a document id no Document holds has no entry.
 */
final class DocumentDetails {
    private static final Label DOCUMENT = Label.label("Document");
    private static final Label ONTOLOGY = Label.label("Ontology");
    private static final Label CATEGORY = Label.label("Category");
    private static final RelationshipType IN_ONTOLOGY = RelationshipType.withName("IN_ONTOLOGY");
    private static final RelationshipType HAS_CATEGORY = RelationshipType.withName("HAS_CATEGORY");

    private DocumentDetails() {}

    /**
     * The ids of the best {@code n} documents of {@code fragments} (every one for a negative
     * {@code n}), as the engine's {@code aggregate_documents} ranks them: by their best
     * fragment's score, ties by document id.
     */
    static List<String> best(List<Fragment> fragments, long n) {
        Map<String, Double> best = new HashMap<>();
        for (Fragment f : fragments) {
            Double held = best.get(f.documentid());
            if (held == null || f.score() > held) {
                best.put(f.documentid(), f.score());
            }
        }
        List<String> ranked = new ArrayList<>(best.keySet());
        ranked.sort(Comparator.comparingDouble((String d) -> -best.get(d))
                .thenComparing(Texts.CODE_POINT_ORDER));
        return n < 0 || n >= ranked.size() ? ranked : ranked.subList(0, (int) n);
    }

    /** The details of each of {@code documentids} that a Document holds, in their order;
     *  {@code found}: the Document nodes the phrase's search read already, by id. */
    static List<List<Object>> of(Transaction tx, List<String> documentids, Map<String, Node> found) {
        List<List<Object>> out = new ArrayList<>(documentids.size());
        for (String documentid : documentids) {
            Node document = found.containsKey(documentid) ? found.get(documentid)
                    : tx.findNode(DOCUMENT, "documentid", documentid);
            if (document != null) {
                out.add(details(document));
            }
        }
        return out;
    }

    private static List<Object> details(Node document) {
        String ontology = null;
        try (ResourceIterable<Relationship> in = document.getRelationships(Direction.OUTGOING, IN_ONTOLOGY)) {
            for (Relationship r : in) {
                Node end = r.getEndNode();
                if (end.hasLabel(ONTOLOGY)) {
                    ontology = stringOrNull(end.getProperty("ontologyid", null));
                    break;
                }
            }
        }
        List<Map<String, Object>> categories = new ArrayList<>();
        try (ResourceIterable<Relationship> has = document.getRelationships(Direction.OUTGOING, HAS_CATEGORY)) {
            for (Relationship r : has) {
                Node end = r.getEndNode();
                if (end.hasLabel(CATEGORY)) {
                    Map<String, Object> category = new HashMap<>(4);
                    category.put("name", end.getProperty("name", null));
                    category.put("value", end.getProperty("value", null));
                    categories.add(category);
                }
            }
        }
        List<Object> out = new ArrayList<>(4);
        out.add(document.getProperty("documentid", null));
        out.add(document.getAllProperties());
        out.add(ontology);
        out.add(categories);
        return out;
    }

    private static String stringOrNull(Object value) {
        return value == null ? null : value.toString();
    }
}
