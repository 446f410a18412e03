package thalabus.procedures;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What a filtered phrase is restricted to, given as values (never Cypher text): a list of
 * document ids and a filter of categories in disjunctive normal form (a list of conjunctions,
 * each a list of literals {@code {name, values, negated}}: the document has one of the values
 * of that category, or with {@code negated} none of them), as the engine pushes its category
 * filters into a phrase's searches ({@code plan.steps.FilterPattern}). Both must hold; either
 * may be absent (null). {@link #parameters} are the restriction parameters of the engine's
 * search statements ({@code search.scope.restriction_params}, unscoped).
 */
record Filter(List<String> documentids, List<List<Map<String, Object>>> conjunctions) {
    private static final String SEPARATOR = "\u001f";

    /** The options' {@code documentids} and {@code filter}, checked (null: no filter). */
    @SuppressWarnings("unchecked")
    static Filter of(Object documentids, Object filter) {
        if (documentids == null && filter == null) {
            return null;
        }
        List<String> ids = null;
        if (documentids != null) {
            ids = new ArrayList<>();
            for (Object id : list(documentids, "documentids")) {
                if (!(id instanceof String s)) {
                    throw new IllegalArgumentException(
                            "thalabus.phrase: option 'documentids' must list strings, not " + id);
                }
                ids.add(s);
            }
        }
        List<List<Map<String, Object>>> conjunctions = null;
        if (filter != null) {
            conjunctions = new ArrayList<>();
            for (Object conj : list(filter, "filter")) {
                List<Map<String, Object>> literals = new ArrayList<>();
                for (Object lit : list(conj, "filter")) {
                    if (!(lit instanceof Map<?, ?> m)) {
                        throw new IllegalArgumentException("thalabus.phrase: option 'filter' "
                                + "must be a list of lists of {name, values, negated} maps, not " + lit);
                    }
                    literals.add(literal((Map<String, Object>) m));
                }
                conjunctions.add(literals);
            }
        }
        return new Filter(ids, conjunctions);
    }

    private static Map<String, Object> literal(Map<String, Object> m) {
        for (String key : m.keySet()) {
            if (!List.of("name", "values", "negated").contains(key)) {
                throw new IllegalArgumentException("thalabus.phrase: a filter literal has "
                        + "name, values and negated, not '" + key + "'");
            }
        }
        if (!(m.get("name") instanceof String name)) {
            throw new IllegalArgumentException(
                    "thalabus.phrase: a filter literal's name must be a string, not " + m.get("name"));
        }
        List<String> values = new ArrayList<>();
        for (Object v : list(m.get("values"), "filter")) {
            if (!(v instanceof String s)) {
                throw new IllegalArgumentException(
                        "thalabus.phrase: a filter literal's values must be strings, not " + v);
            }
            values.add(s);
        }
        Object negated = m.getOrDefault("negated", Boolean.FALSE);
        if (!(negated instanceof Boolean)) {
            throw new IllegalArgumentException(
                    "thalabus.phrase: a filter literal's negated must be a boolean, not " + negated);
        }
        List<String> keys = new ArrayList<>(values.size());
        for (String v : values) {
            keys.add(name + SEPARATOR + v);
        }
        Map<String, Object> out = new HashMap<>();
        out.put("name", name);
        out.put("values", values);
        out.put("negated", negated);
        out.put("keys", keys);
        return out;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object value, String option) {
        if (!(value instanceof List<?> l)) {
            throw new IllegalArgumentException("thalabus.phrase: option '" + option
                    + "' must be a list, not " + value);
        }
        return (List<Object>) l;
    }

    /** The search statements' restriction parameters: the id list, no scope, the filter and
     *  its seeds ({@code FilterPattern.seeds}: the values of the first positive literal of
     *  each conjunction, where exact search starts; null when a conjunction has none). */
    Map<String, Object> parameters() {
        Map<String, Object> out = new HashMap<>();
        out.put("documentids", documentids);
        out.put("ontologyid", null);
        out.put("datasetids", null);
        out.put("name", null);
        out.put("values", null);
        out.put("negated", false);
        out.put("filter", conjunctions);
        out.put("seeds", conjunctions == null ? null : seeds());
        return out;
    }

    @SuppressWarnings("unchecked")
    private List<List<String>> seeds() {
        List<List<String>> out = new ArrayList<>();
        for (List<Map<String, Object>> conj : conjunctions) {
            Map<String, Object> positive = null;
            for (Map<String, Object> lit : conj) {
                if (!(Boolean) lit.get("negated")) {
                    positive = lit;
                    break;
                }
            }
            if (positive == null) {
                return null;
            }
            for (String value : (List<String>) positive.get("values")) {
                out.add(List.of((String) positive.get("name"), value));
            }
        }
        return out;
    }
}
