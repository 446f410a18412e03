package thalabus.procedures.fusion;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

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
import java.util.TreeSet;

/**
 * The conformance check's entry point: reads JSON lines {@code {"fn": name, "args": {...}}} on
 * standard input and prints one JSON line per case, the answer of this package's rule of that
 * name ({@code {"error": message}} when it throws), so a test can hold it against the Python
 * engine's answer (tests/integration/test_java_fusion.py). Fragments travel as
 * {@code Fragment.to_dict()} does, hits as [fragmentid, documentid, text, score] lists.
 */
public final class Check {
    private static final ObjectMapper JSON = new ObjectMapper();

    private Check() {}

    /** Answers every case on standard input, in order. */
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
                StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode answer;
            try {
                JsonNode c = JSON.readTree(line);
                answer = reply(c.get("fn").asText(), c.get("args"));
            } catch (RuntimeException e) {
                answer = JSON.createObjectNode().put("error", String.valueOf(e));
            }
            out.println(JSON.writeValueAsString(answer));
        }
        out.flush();
    }

    private static JsonNode reply(String fn, JsonNode a) {
        switch (fn) {
            case "lower":
                return JSON.valueToTree(Texts.lower(a.get("text").asText()));
            case "plain_words":
                return sortedWords(Texts.plainWords(text(a.get("text"))));
            case "shared_words":
                return sortedWords(Fusion.sharedWords(strings(a.get("words")),
                        text(a.get("text"))));
            case "chars":
                return chars(a.get("start").asInt(), a.get("end").asInt());
            case "language_slots":
                return languageSlots(a);
            case "semantic_fragments":
                return fragments(Hits.semanticFragments(settings(a.get("settings")),
                        a.get("source").asText(), hits(a.get("hits"))));
            case "text_fragments":
                return fragments(Hits.textFragments(settings(a.get("settings")),
                        a.get("source").asText(), hits(a.get("hits")), a.get("best").asDouble(),
                        a.hasNonNull("top_n") ? a.get("top_n").asInt() : null));
            case "convex":
                return fragments(Fusion.fuseConvex(fragments(a.get("semantic")),
                        fragments(a.get("text")), a.get("lo").asDouble(), a.get("hi").asDouble(),
                        a.get("text_weight").asDouble()));
            case "max":
                return fragments(Fusion.fuseMax(fragments(a.get("semantic")),
                        fragments(a.get("text")), a.get("lo").asDouble(),
                        a.get("hi").asDouble()));
            case "rrf":
                return fragments(Fusion.fuseRrf(fragments(a.get("semantic")),
                        fragments(a.get("text")), a.get("k").asInt()));
            case "ranked_onto":
                return fragments(Fusion.rankedOnto(fragments(a.get("fused")),
                        fragments(a.get("semantic"))));
            case "terms_query":
                return JSON.valueToTree(Lucene.termsQuery(a.get("term").asText(),
                        a.path("max_terms").asInt(Lucene.MAX_QUERY_TERMS)));
            case "phrase_query":
                return JSON.valueToTree(Lucene.phraseQuery(a.get("term").asText()));
            case "phrase_fusion":
                return phraseFusion(a);
            default:
                throw new IllegalArgumentException("no rule named " + fn);
        }
    }

    /** One {@link LanguageSlots} fitted on {@code fit} and applied to semantic/text: the fused
     *  list and what the fit decided. */
    private static JsonNode languageSlots(JsonNode a) {
        JsonNode fit = a.get("fit");
        LanguageSlots rule = LanguageSlots.fit(a.get("query").asText(),
                fragments(fit.get("semantic")), fragments(fit.get("text")),
                languages(a.get("languages")), a.get("text_weight").asDouble(),
                a.get("full_coverage").asDouble(),
                a.hasNonNull("low") ? a.get("low").asDouble() : null,
                new java.util.IdentityHashMap<>());
        ObjectNode out = JSON.createObjectNode();
        out.set("fused", fragments(rule.fuse(fragments(a.get("semantic")),
                fragments(a.get("text")))));
        out.put("query_language", rule.queryLanguage());
        out.put("floor", rule.floor());
        out.set("range", JSON.valueToTree(rule.semanticRange()));
        out.set("slots", JSON.valueToTree(rule.slots()));
        out.set("best_fused", JSON.valueToTree(rule.bestFused()));
        out.set("fitted", JSON.valueToTree(rule.fitted()));
        out.set("idf", JSON.valueToTree(rule.idf()));
        return out;
    }

    /** A {@link PhraseFusion} with its remembered state set, then each call's fused list. */
    private static JsonNode phraseFusion(JsonNode a) {
        PhraseFusion fusion = new PhraseFusion(settings(a.get("settings")));
        fusion.semanticScale = a.path("semantic_scale").asBoolean(false);
        fusion.languages.putAll(languages(a.get("languages")));
        a.path("lows").properties().forEach(e ->
                fusion.lows.put(e.getKey(), e.getValue().asDouble()));
        a.path("unrestricted").properties().forEach(e ->
                fusion.unrestricted.put(e.getKey(), candidates(e.getValue())));
        a.path("ranges_from").properties().forEach(e ->
                fusion.rememberRange(e.getKey(), fragments(e.getValue())));
        ArrayNode out = JSON.createArrayNode();
        for (JsonNode call : a.get("calls")) {
            out.add(fragments(fusion.fuse(call.get("phrase").asText(),
                    fragments(call.get("semantic")), fragments(call.get("text")),
                    call.path("restricted").asBoolean(false),
                    call.hasNonNull("fit") ? candidates(call.get("fit")) : null)));
        }
        return out;
    }

    /** The two-letter Unicode general category of each {@link Character#getType} value. */
    private static final String CATEGORIES =
            "CnLuLlLtLmLoMnMeMcNdNlNoZsZlZpCcCf  CoCsPdPsPePcPoSmScSkSoPiPf";

    /** Every code point's classes in [start, end): ranges of word, space, cased and
     *  case-ignorable characters, each code point {@link Texts#lower} changes, and runs of
     *  general categories ([from, to, category]) of the JDK's Unicode tables. */
    private static JsonNode chars(int start, int end) {
        ObjectNode out = JSON.createObjectNode();
        ArrayNode categories = out.putArray("categories");
        for (int cp = start; cp < end; ) {
            int type = Character.getType(cp);
            int to = cp + 1;
            while (to < end && Character.getType(to) == type) {
                to++;
            }
            categories.addArray().add(cp).add(to)
                    .add(CATEGORIES.substring(2 * type, 2 * type + 2));
            cp = to;
        }
        out.set("word", ranges(start, end, Texts::isWordChar));
        out.set("space", ranges(start, end, Texts::isSpace));
        out.set("cased", ranges(start, end, thalabus.procedures.scoring.Tokens::isCased));
        out.set("ignorable", ranges(start, end, thalabus.procedures.scoring.Tokens::isCaseIgnorable));
        ObjectNode lowered = JSON.createObjectNode();
        for (int cp = start; cp < end; cp++) {
            String one = new String(Character.toChars(cp));
            String low = Texts.lower(one);
            if (!low.equals(one)) {
                lowered.put(Integer.toString(cp), low);
            }
        }
        out.set("lower", lowered);
        return out;
    }

    private static ArrayNode ranges(int start, int end, java.util.function.IntPredicate test) {
        ArrayNode out = JSON.createArrayNode();
        int from = -1;
        for (int cp = start; cp <= end; cp++) {
            boolean in = cp < end && test.test(cp);
            if (in && from < 0) {
                from = cp;
            } else if (!in && from >= 0) {
                out.add(JSON.createArrayNode().add(from).add(cp));
                from = -1;
            }
        }
        return out;
    }

    private static String text(JsonNode node) {
        return node == null || node.isNull() ? null : node.asText();
    }

    private static List<String> strings(JsonNode node) {
        List<String> out = new ArrayList<>();
        node.forEach(n -> out.add(n.asText()));
        return out;
    }

    private static JsonNode sortedWords(Set<String> words) {
        Set<String> sorted = new TreeSet<>(Texts.CODE_POINT_ORDER);
        sorted.addAll(words);
        return JSON.valueToTree(new ArrayList<>(sorted));
    }

    private static Map<String, String> languages(JsonNode node) {
        Map<String, String> out = new HashMap<>();
        if (node != null) {
            node.properties().forEach(e -> out.put(e.getKey(), text(e.getValue())));
        }
        return out;
    }

    private static FusionSettings settings(JsonNode node) {
        Map<String, Object> values = new HashMap<>();
        if (node != null) {
            for (Map.Entry<String, JsonNode> e : node.properties()) {
                JsonNode v = e.getValue();
                values.put(e.getKey(), v.isNumber() ? (Object) v.numberValue()
                        : v.isBoolean() ? (Object) v.booleanValue() : v.asText());
            }
        }
        return FusionSettings.fromMap(values);
    }

    private static PhraseFusion.Candidates candidates(JsonNode node) {
        return new PhraseFusion.Candidates(fragments(node.get("semantic")),
                fragments(node.get("text")));
    }

    private static List<Hits.Hit> hits(JsonNode node) {
        List<Hits.Hit> out = new ArrayList<>();
        for (JsonNode h : node) {
            out.add(new Hits.Hit(h.get(0).asText(), h.get(1).asText(), text(h.get(2)),
                    h.get(3).asDouble()));
        }
        return out;
    }

    private static List<Fragment> fragments(JsonNode node) {
        List<Fragment> out = new ArrayList<>();
        for (JsonNode f : node) {
            out.add(new Fragment(f.get("fragmentid").asText(), f.get("documentid").asText(),
                    text(f.get("text")), f.get("score").asDouble(), f.get("source").asText(),
                    strings(f.path("contributions"))));
        }
        return out;
    }

    private static ArrayNode fragments(List<Fragment> fragments) {
        ArrayNode out = JSON.createArrayNode();
        for (Fragment f : fragments) {
            ObjectNode node = out.addObject();
            node.put("fragmentid", f.fragmentid());
            node.put("documentid", f.documentid());
            node.put("text", f.text());
            node.put("score", f.score());
            node.put("source", f.source());
            node.set("contributions", JSON.valueToTree(f.contributions()));
        }
        return out;
    }
}
