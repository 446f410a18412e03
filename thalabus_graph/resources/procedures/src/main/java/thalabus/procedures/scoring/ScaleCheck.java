package thalabus.procedures.scoring;

import com.fasterxml.jackson.databind.JsonNode;

/** The scale part of {@link Check}: cases of {@link Scale}'s rules. */
final class ScaleCheck {
    private ScaleCheck() {}

    static JsonNode answer(String fn, JsonNode a) {
        throw new IllegalArgumentException("unknown fn " + fn);
    }
}
