package thalabus.procedures.scoring;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** The scale part of {@link Check}: cases of {@link Scale}'s rules. */
final class ScaleCheck {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private ScaleCheck() {}

    static JsonNode reply(String fn, JsonNode a) {
        switch (fn) {
            case "sample":
                return candidates(Scale.sample(fragments(a.get("semantic")),
                        candidates(a.get("beyond")), languages(a.get("languages"))));
            case "other_language_best": {
                Double best = Scale.otherLanguageBest(candidates(a.get("drawn")));
                return best == null ? NODES.nullNode() : NODES.numberNode(best);
            }
            case "phrase":
                return phrase(a);
            case "dropped_warning": {
                DroppedWarning w = DroppedWarning.of(a.get("phrase").textValue(),
                        a.get("dropped").intValue(), a.get("kept").intValue(),
                        Check.optDouble(a.get("best_cosine")), a.get("rule").textValue(),
                        a.get("gate").doubleValue(), a.get("floor").doubleValue());
                return warning(w);
            }
            default:
                throw new IllegalArgumentException("unknown fn " + fn);
        }
    }

    /** remember, then apply to each list of fragments in turn. */
    private static JsonNode phrase(JsonNode a) {
        Calibration c = Check.calibrationOf(a);
        String phrase = a.get("phrase").textValue();
        Map<String, Long> sizes = new HashMap<>();
        a.get("sizes").properties().forEach(e -> sizes.put(e.getKey(), e.getValue().longValue()));
        Background bg = Scale.remember(c, phrase, fragments(a.get("semantic")), sizes,
                candidates(a.get("beyond")), fragments(a.get("text")),
                languages(a.get("languages")), a.get("foreign").booleanValue());
        JsonNode s = a.get("settings");
        Map<String, Double> fields = new HashMap<>();
        s.properties().forEach(e -> fields.put(e.getKey(), e.getValue().doubleValue()));
        ScaleSettings settings = ScaleSettings.of(fields);
        ObjectNode out = NODES.objectNode();
        out.set("bg", bg == null ? NODES.nullNode() : Check.background(bg));
        ArrayNode applied = out.putArray("applied");
        for (JsonNode call : a.get("apply")) {
            ObjectNode one = applied.addObject();
            try {
                Scale.Applied result = Scale.apply(c, settings, phrase, bg, fragments(call));
                one.set("fragments", fragments(result.fragments()));
                one.set("warning", result.warning() == null ? NODES.nullNode()
                        : warning(result.warning()));
            } catch (ArithmeticException e) {
                one.put("error", e.getMessage());
            }
        }
        return out;
    }

    private static JsonNode warning(DroppedWarning w) {
        ObjectNode out = NODES.objectNode();
        out.put("kind", DroppedWarning.KIND);
        out.put("subject", w.phrase());
        out.put("dropped", w.dropped());
        out.put("kept", w.kept());
        out.put("best_cosine", w.bestCosine());
        out.put("rule", w.rule());
        out.put("message", w.message());
        return out;
    }

    private static Map<String, String> languages(JsonNode map) {
        if (map == null || map.isNull()) {
            return null;
        }
        Map<String, String> out = new HashMap<>();
        map.properties().forEach(e -> out.put(e.getKey(), Check.optString(e.getValue())));
        return out;
    }

    private static List<Fragment> fragments(JsonNode list) {
        List<Fragment> out = new ArrayList<>();
        for (JsonNode f : list) {
            out.add(new Fragment(f.get(0).textValue(), f.get(1).textValue(),
                    Check.optString(f.get(2)), f.get(3).doubleValue(), f.get(4).textValue(),
                    Check.optStrings(f.get(5))));
        }
        return out;
    }

    private static ArrayNode fragments(List<Fragment> fragments) {
        ArrayNode out = NODES.arrayNode();
        for (Fragment f : fragments) {
            ArrayNode contributions = NODES.arrayNode();
            f.contributions().forEach(contributions::add);
            out.addArray().add(f.fragmentid()).add(f.documentid()).add(f.text()).add(f.score())
                    .add(f.source()).add(contributions);
        }
        return out;
    }

    private static List<Candidate> candidates(JsonNode list) {
        List<Candidate> out = new ArrayList<>();
        for (JsonNode c : list) {
            out.add(new Candidate(c.get(0).textValue(), c.get(1).doubleValue(),
                    Check.optString(c.get(2)), Check.optString(c.get(3))));
        }
        return out;
    }

    private static ArrayNode candidates(List<Candidate> candidates) {
        ArrayNode out = NODES.arrayNode();
        for (Candidate c : candidates) {
            out.addArray().add(c.source()).add(c.score()).add(c.text()).add(c.language());
        }
        return out;
    }
}
