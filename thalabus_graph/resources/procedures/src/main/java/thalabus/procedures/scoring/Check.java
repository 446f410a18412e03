package thalabus.procedures.scoring;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The conformance check of the scoring rules against the Python engine
 * ({@code tests/integration/test_java_calibration.py}): reads JSON lines
 * {@code {"fn": name, "args": {...}}} on stdin and prints one JSON line per case,
 * {@code {"ok": answer}} or {@code {"error": message, "field": field}}, in order.
 */
public final class Check {
    // ASCII out: a line separator such as U+2028 inside an answer would split its line
    private static final JsonMapper JSON = JsonMapper.builder()
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final Map<String, Calibration> CALIBRATIONS = new HashMap<>();

    private Check() {}

    /** Answer every case on stdin. */
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
                StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode kase = JSON.readTree(line);
            ObjectNode answer = NODES.objectNode();
            try {
                answer.set("ok", reply(kase.get("fn").textValue(), kase.get("args")));
            } catch (RuntimeException e) {
                answer.put("error", String.valueOf(e.getMessage()));
                answer.put("kind", e.getClass().getSimpleName());
                if (e instanceof CalibrationException) {
                    answer.put("field", ((CalibrationException) e).field());
                }
            }
            out.println(JSON.writeValueAsString(answer));
        }
        out.flush();
    }

    private static JsonNode reply(String fn, JsonNode a) {
        switch (fn) {
            case "inv_cdf":
                return NODES.numberNode(NormalDist.invCdf(a.get("p").doubleValue()));
            case "erfc":
                return NODES.numberNode(Erfc.erfc(a.get("x").doubleValue()));
            case "background":
                return background(Calibration.background(doubles(a.get("cosines")),
                        a.get("size").longValue(), a.get("skip").intValue(),
                        optDouble(a.get("share"))));
            case "evidence":
                return NODES.numberNode(Calibration.evidence(a.get("cosine").doubleValue(),
                        readBackground(a.get("bg"))));
            case "calibration":
                return calibration(Calibration.fromJson(a.get("json").textValue()));
            case "shipped": {
                Calibration c = Calibration.shipped(a.get("model").textValue());
                return c == null ? NODES.nullNode() : calibration(c);
            }
            case "score":
                return score(calibrationOf(a), a);
            case "fold":
                return NODES.textNode(Tokens.fold(a.get("text").textValue()));
            case "assigned": {
                ArrayNode out = NODES.arrayNode();
                a.get("text").textValue().codePoints().forEach(
                        c -> out.add(Character.getType(c) != Character.UNASSIGNED));
                return out;
            }
            case "lower":
                return NODES.textNode(Tokens.lower(a.get("text").textValue()));
            case "words":
                return strings(Tokens.words(a.get("text").textValue()));
            case "word_count":
                return NODES.numberNode(Tokens.wordCount(a.get("text").textValue()));
            case "is_spaceless":
                return NODES.booleanNode(Tokens.isSpaceless(a.get("text").textValue()));
            case "lexical_words":
                return strings(Tokens.lexicalWords(a.get("text").textValue(),
                        a.get("min_letters").intValue()));
            case "plain_words":
                return strings(Tokens.plainWords(a.get("text").textValue()));
            case "holds_word":
                return NODES.booleanNode(Tokens.holdsWord(a.get("text").textValue(),
                        a.get("word").textValue()));
            case "phrase_words":
                return strings(Lexical.phraseWords(a.get("phrase").textValue()));
            case "is_short":
                return NODES.booleanNode(Lexical.isShort(a.get("phrase").textValue()));
            case "covers":
                return NODES.booleanNode(Lexical.covers(a.get("phrase").textValue(),
                        optStrings(a.get("texts"))));
            case "lexical_share": {
                Double share = Lexical.lexicalShare(a.get("phrase").textValue(),
                        optStrings(a.get("texts")));
                return share == null ? NODES.nullNode() : NODES.numberNode(share);
            }
            default:
                return ScaleCheck.reply(fn, a);
        }
    }

    static Calibration calibrationOf(JsonNode a) {
        if (a.has("shipped")) {
            return Calibration.shipped(a.get("shipped").textValue());
        }
        String text = a.get("calibration").textValue();
        return CALIBRATIONS.computeIfAbsent(text, Calibration::fromJson);
    }

    private static JsonNode score(Calibration c, JsonNode a) {
        Background bg = c.background(doubles(a.get("cosines")), a.get("size").longValue(),
                optDouble(a.get("share")));
        bg = bg.withOther(optDouble(a.get("other")), a.get("lexical").booleanValue())
                .withForeign(a.get("foreign").booleanValue());
        ObjectNode out = NODES.objectNode();
        out.set("bg", background(bg));
        out.put("gate", c.gateOf(bg));
        out.put("language_matters", c.languageMatters(bg));
        String source = a.get("source").textValue();
        SourceMap map = c.mapFor(source);
        out.set("map", NODES.arrayNode().add(map.intercept()).add(map.slope()));
        ArrayNode scores = out.putArray("scores");
        ArrayNode evidence = out.putArray("evidence");
        for (JsonNode cosine : a.get("probe")) {
            scores.add(c.score(source, cosine.doubleValue(), bg));
            evidence.add(Calibration.evidence(cosine.doubleValue(), bg));
        }
        return out;
    }

    static ObjectNode background(Background bg) {
        ObjectNode out = NODES.objectNode();
        out.put("mu", bg.mu());
        out.put("sigma", bg.sigma());
        out.put("size", bg.size());
        out.put("best", bg.best());
        out.put("share", bg.share());
        out.put("foreign", bg.foreign());
        out.put("other", bg.other());
        out.put("lexical", bg.lexical());
        return out;
    }

    static Background readBackground(JsonNode b) {
        return new Background(b.get("mu").doubleValue(), b.get("sigma").doubleValue(),
                b.get("size").longValue(), optDouble(b.get("best")), optDouble(b.get("share")),
                b.path("foreign").booleanValue(), optDouble(b.get("other")),
                b.path("lexical").booleanValue());
    }

    private static JsonNode calibration(Calibration c) {
        ObjectNode out = NODES.objectNode();
        out.put("model", c.model());
        out.put("skip", c.skip());
        out.set("fitted_on", strings(c.fittedOn()));
        ObjectNode sources = out.putObject("sources");
        c.sources().forEach((name, m) -> sources.set(name,
                NODES.arrayNode().add(m.intercept()).add(m.slope())));
        out.set("gate", gate(c.gate()));
        out.set("foreign_gate", gate(c.foreignGate()));
        out.set("reading", c.reading() == null ? NODES.nullNode()
                : NODES.arrayNode().add(c.reading().intercept()).add(c.reading().slope()));
        out.set("measured", c.measured());
        return out;
    }

    private static JsonNode gate(Gate g) {
        if (g == null) {
            return NODES.nullNode();
        }
        ArrayNode out = NODES.arrayNode().add(g.intercept()).add(g.slope());
        return g.shareSlope() == null ? out.addNull() : out.add(g.shareSlope());
    }

    static double[] doubles(JsonNode list) {
        double[] out = new double[list.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = list.get(i).doubleValue();
        }
        return out;
    }

    static Double optDouble(JsonNode value) {
        return value == null || value.isNull() ? null : value.doubleValue();
    }

    static String optString(JsonNode value) {
        return value == null || value.isNull() ? null : value.textValue();
    }

    static List<String> optStrings(JsonNode list) {
        List<String> out = new ArrayList<>();
        for (JsonNode t : list) {
            out.add(optString(t));
        }
        return out;
    }

    /** Words as a list in Python's sorted order (a set's order is not part of the answer). */
    static ArrayNode strings(java.util.Collection<String> words) {
        List<String> sorted = new ArrayList<>(words);
        if (words instanceof Set) {
            sorted.sort(Python.CODE_POINT_ORDER);
        }
        ArrayNode out = NODES.arrayNode();
        sorted.forEach(out::add);
        return out;
    }
}
