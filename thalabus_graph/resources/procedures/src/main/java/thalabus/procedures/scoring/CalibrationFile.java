package thalabus.procedures.scoring;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;

/**
 * The Java form of {@code thalabus_graph.scoring.calibration_file}'s reading side: the JSON
 * form of a {@link Calibration} ({@link #FORMAT}), checked field by field as
 * {@code from_dict} checks it (types, ranges, no unknown field), so a file the engine refuses
 * is refused here too, naming the same field ({@link CalibrationException#field()}).
 *
 * <p>The text is read as Python's {@code json.loads} reads it: {@code NaN} and
 * {@code Infinity} are numbers (then refused as not finite), a number with a fraction or an
 * exponent is a float (so {@code "skip": 20.0} is refused), trailing text is an error and a
 * repeated key keeps its last value.
 */
public final class CalibrationFile {
    /** The {@code format} field of a calibration file. */
    public static final String FORMAT = "thalabus-calibration/1";
    /** The {@code feature} field: what the maps read ({@link Calibration#evidence}). */
    public static final String FEATURE = "tail-evidence";
    /** Largest {@code skip}. */
    public static final int MAX_SKIP = 10_000;
    /** Largest absolute intercept or slope of a map or a gate. */
    public static final double MAX_COEFFICIENT = 1e4;
    /** Smallest map slope (below it every hit reads as about the same probability). */
    public static final double MIN_MAP_SLOPE = 0.1;
    /** Most source maps and {@code fitted_on} entries. */
    public static final int MAX_NAMES = 64;
    /** Longest model, source or data-set name (code points). */
    public static final int MAX_NAME_CHARS = 256;
    /** Every field a calibration file may hold. */
    public static final Set<String> FIELDS = Set.of("format", "model", "feature", "skip",
            "fitted_on", "sources", "gate", "foreign_gate", "reading", "measured");
    private static final Set<String> MAP_FIELDS = Set.of("intercept", "slope");
    private static final Set<String> GATE_FIELDS = Set.of("intercept", "slope", "share_slope");
    private static final JsonMapper JSON = JsonMapper.builder()
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private CalibrationFile() {}

    /** A calibration from its JSON text; {@code origin} (the file) is named by an error. */
    public static Calibration fromJson(String json, String origin) {
        JsonNode data;
        try {
            data = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new CalibrationException(origin + " is not valid JSON: " + e.getOriginalMessage(),
                    null);
        }
        return fromDict(data, origin);
    }

    /**
     * Read the JSON form, every field checked in {@code from_dict}'s order; anything else is a
     * {@link CalibrationException} naming {@code origin} and the field.
     */
    public static Calibration fromDict(JsonNode data, String origin) {
        if (data == null || !data.isObject()) {
            throw new CalibrationException(origin + ": not a calibration file (a JSON object "
                    + "expected)", null);
        }
        JsonNode format = data.get("format");
        if (format == null || !format.isTextual() || !format.textValue().equals(FORMAT)) {
            throw new CalibrationException(origin + ": not a calibration file (format "
                    + shown(format) + ", expected '" + FORMAT + "')", null);
        }
        TreeSet<String> unknown = new TreeSet<>(Python.CODE_POINT_ORDER);
        data.fieldNames().forEachRemaining(k -> {
            if (!FIELDS.contains(k)) {
                unknown.add(k);
            }
        });
        if (!unknown.isEmpty()) {
            throw wrong(origin, unknown.first(), "is not a calibration field");
        }
        String model = name(data.get("model"), "model", origin);
        if (data.has("feature")) {
            JsonNode feature = data.get("feature");
            if (!feature.isTextual() || !feature.textValue().equals(FEATURE)) {
                throw wrong(origin, "feature", "must be '" + FEATURE + "' (found " + shown(feature)
                        + ")");
            }
        }
        int skip = Calibration.DEFAULT_SKIP;
        if (data.has("skip")) {
            JsonNode raw = data.get("skip");
            if (!raw.isIntegralNumber() || !raw.canConvertToInt() || raw.intValue() < 0
                    || raw.intValue() > MAX_SKIP) {
                throw wrong(origin, "skip", "must be a whole number from 0 to " + MAX_SKIP
                        + " (found " + shown(raw) + ")");
            }
            skip = raw.intValue();
        }
        List<String> names = new ArrayList<>();
        if (data.has("fitted_on")) {
            JsonNode fitted = data.get("fitted_on");
            if (!fitted.isArray() || fitted.size() > MAX_NAMES) {
                throw wrong(origin, "fitted_on", "must be a list of at most " + MAX_NAMES
                        + " names");
            }
            for (JsonNode n : fitted) {
                names.add(name(n, "fitted_on", origin));
            }
        }
        JsonNode rawSources = data.get("sources");
        if (rawSources == null || !rawSources.isObject() || rawSources.size() == 0
                || rawSources.size() > MAX_NAMES) {
            throw wrong(origin, "sources", "must map 1 to " + MAX_NAMES + " source names to "
                    + "their maps ({\"intercept\": ..., \"slope\": ...})");
        }
        Map<String, SourceMap> sources = new LinkedHashMap<>();
        Iterator<Map.Entry<String, JsonNode>> entries = rawSources.properties().iterator();
        while (entries.hasNext()) {
            Map.Entry<String, JsonNode> entry = entries.next();
            String field = "sources." + name(JsonNodeFactory.instance.textNode(entry.getKey()),
                    "sources", origin);
            Map<String, Double> values = numbers(entry.getValue(), field, MAP_FIELDS, MAP_FIELDS,
                    origin);
            double slope = values.get("slope");
            if (!(MIN_MAP_SLOPE <= slope && slope <= MAX_COEFFICIENT)) {
                throw wrong(origin, field + ".slope", "must be from " + MIN_MAP_SLOPE + " to "
                        + Python.general(MAX_COEFFICIENT) + " (a smaller slope scores every hit "
                        + "about the same)");
            }
            sources.put(entry.getKey(), new SourceMap(values.get("intercept"), slope));
        }
        Gate gate = gate(data.get("gate"), "gate", origin);
        Gate foreignGate = gate(data.get("foreign_gate"), "foreign_gate", origin);
        if (foreignGate != null && (gate == null || foreignGate.shareSlope() != null)) {
            throw wrong(origin, "foreign_gate", "reads the best cosine alone (no share_slope) "
                    + "and needs a gate beside it");
        }
        SourceMap reading = null;
        JsonNode rawReading = data.get("reading");
        if (rawReading != null && !rawReading.isNull()) {
            Map<String, Double> values = numbers(rawReading, "reading", MAP_FIELDS, MAP_FIELDS,
                    origin);
            if (!(values.get("slope") > 0)) {
                throw wrong(origin, "reading.slope", "must be positive: a reading keeps the "
                        + "order of the scores");
            }
            reading = new SourceMap(values.get("intercept"), values.get("slope"));
        }
        JsonNode measured = data.has("measured") ? data.get("measured")
                : JsonNodeFactory.instance.objectNode();
        if (!measured.isObject()) {
            throw wrong(origin, "measured", "must be a JSON object");
        }
        return new Calibration(model, sources, skip, names, measured, gate, foreignGate,
                reading);
    }

    private static CalibrationException wrong(String origin, String field, String what) {
        return new CalibrationException(origin + ": field " + Python.repr(field) + " " + what
                + "; fix the file, write it again with thalabus-graph calibrate, or set "
                + "THALABUS_CALIBRATION_FILE=none", field);
    }

    private static String shown(JsonNode value) {
        String text = value == null || value.isNull() ? "None" : value.toString();
        return text.length() <= 60 ? text : text.substring(0, 57) + "...";
    }

    /** A non-empty name of at most {@link #MAX_NAME_CHARS} code points. */
    private static String name(JsonNode value, String field, String origin) {
        if (value == null || !value.isTextual() || value.textValue().isEmpty()
                || Python.len(value.textValue()) > MAX_NAME_CHARS) {
            throw wrong(origin, field, "must hold names of 1 to " + MAX_NAME_CHARS
                    + " characters (found " + shown(value) + ")");
        }
        return value.textValue();
    }

    /** The finite numbers of a map's or a gate's object, each at most MAX_COEFFICIENT in size. */
    private static Map<String, Double> numbers(JsonNode raw, String field, Set<String> required,
                                               Set<String> allowed, String origin) {
        if (raw == null || !raw.isObject()) {
            throw wrong(origin, field, "must be a JSON object with "
                    + String.join(", ", new TreeSet<>(required)));
        }
        for (String key : new TreeSet<>(required)) {
            if (!raw.has(key)) {
                throw wrong(origin, field + "." + key, "is missing");
            }
        }
        TreeSet<String> unknown = new TreeSet<>(Python.CODE_POINT_ORDER);
        raw.fieldNames().forEachRemaining(k -> {
            if (!allowed.contains(k)) {
                unknown.add(k);
            }
        });
        if (!unknown.isEmpty()) {
            throw wrong(origin, field + "." + unknown.first(), "is not a field here");
        }
        Map<String, Double> out = new LinkedHashMap<>();
        Iterator<Map.Entry<String, JsonNode>> entries = raw.properties().iterator();
        while (entries.hasNext()) {
            Map.Entry<String, JsonNode> entry = entries.next();
            JsonNode value = entry.getValue();
            double number = value.isNumber() ? value.doubleValue() : Double.NaN;
            if (!value.isNumber() || !Double.isFinite(number)
                    || Math.abs(number) > MAX_COEFFICIENT) {
                throw wrong(origin, field + "." + entry.getKey(), "must be a finite number of at "
                        + "most " + Python.general(MAX_COEFFICIENT) + " in size (found "
                        + shown(value) + ")");
            }
            out.put(entry.getKey(), number);
        }
        return out;
    }

    /** A gate's JSON form read and checked (absent or null: null); its slopes must be positive. */
    private static Gate gate(JsonNode raw, String field, String origin) {
        if (raw == null || raw.isNull()) {
            return null;
        }
        Map<String, Double> values = numbers(raw, field, MAP_FIELDS, GATE_FIELDS, origin);
        for (String key : List.of("slope", "share_slope")) {
            if (values.containsKey(key) && !(values.get(key) > 0)) {
                throw wrong(origin, field + "." + key, "must be positive: a gate rises with the "
                        + "best cosine and the shared words");
            }
        }
        return new Gate(values.get("intercept"), values.get("slope"), values.get("share_slope"));
    }
}
