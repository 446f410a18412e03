package thalabus.procedures.fusion;

import thalabus.procedures.scoring.Tokens;

import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Python's string rules the fusion depends on, so a Java score reads text exactly as the engine
 * does: {@code str.lower()}, the {@code \w} and {@code \s} classes of Python's {@code re} on
 * {@code str}, the code point order of {@code sorted} on strings, and {@code plain_words}.
 *
 * <p>{@link #plainWords} is the Java form of {@code thalabus_graph.scoring.tokens.plain_words}, a
 * private copy of the part of {@code tokens.py} hybrid fusion needs (the phrase gate's
 * {@code lexical_words} belongs to the calibration's port).
 *
 * <p>Why not the JDK's own rules: {@code String.toLowerCase(Locale.ROOT)} decides the final sigma
 * by word boundaries where Python looks at the cased and case-ignorable neighbours; Java's
 * regex {@code \w} (with {@code UNICODE_CHARACTER_SET}) also matches combining marks, which
 * Python's does not; {@code String.compareTo} orders UTF-16 units, which puts a supplementary
 * character before U+E000..U+FFFF where Python puts it after. Character properties come from
 * the running JDK's Unicode tables, so a character one side's Unicode version assigns and the
 * other's does not (Python 3.11 knows 14.0, JDK 17 13.0, JDK 25 16.0) is a word character on
 * one side only; every character both know reads alike.
 */
public final class Texts {
    /** Python's order of strings: by code point, not by UTF-16 unit. */
    public static final Comparator<String> CODE_POINT_ORDER = Texts::compareCodePoints;

    private Texts() {}

    /** {@code a < b} as Python compares strings (negative, zero, positive). */
    public static int compareCodePoints(String a, String b) {
        return Tokens.compareCodePoints(a, b);
    }

    /** Whether Python's {@code \w} matches the code point: a letter (L*), a number (Nd, Nl, No)
     *  or the underscore, which is {@code str.isalnum() or ch == "_"}. */
    public static boolean isWordChar(int cp) {
        return Tokens.isWordChar(cp);
    }

    /** Whether Python's {@code \s} matches the code point ({@code str.isspace()}): the Unicode
     *  White_Space characters and U+001C..U+001F, which Python counts as separators too. */
    public static boolean isSpace(int cp) {
        switch (cp) {
            case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D:
            case 0x1C: case 0x1D: case 0x1E: case 0x1F: case 0x20:
            case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029:
            case 0x202F: case 0x205F: case 0x3000:
                return true;
            default:
                return cp >= 0x2000 && cp <= 0x200A;
        }
    }

    /** Python's {@code str.lower()} ({@link Tokens#lower}), each text lowered once
     *  ({@link Tokens#lowered}: a phrase's fit and fusion read each hit's text, and so does the
     *  gate; {@code shared_words} is cached in Python too). */
    public static String lower(String text) {
        return Tokens.lowered(text);
    }

    /**
     * The Java form of {@code tokens.plain_words}: the distinct runs of word characters
     * ({@code \w+}) of the lowercased text, in reading order (Python's frozenset has none;
     * callers only test membership). Empty for null or empty text.
     */
    public static Set<String> plainWords(String text) {
        Set<String> out = new LinkedHashSet<>();
        if (text == null || text.isEmpty()) {
            return out;
        }
        out.addAll(Tokens.words(lower(text)));
        return out;
    }
}
