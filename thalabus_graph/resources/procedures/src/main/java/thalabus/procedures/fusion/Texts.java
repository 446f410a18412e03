package thalabus.procedures.fusion;

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
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int x = a.codePointAt(i);
            int y = b.codePointAt(j);
            if (x != y) {
                return Integer.compare(x, y);
            }
            i += Character.charCount(x);
            j += Character.charCount(y);
        }
        return Boolean.compare(i < a.length(), j < b.length());
    }

    /** Whether Python's {@code \w} matches the code point: a letter (L*), a number (Nd, Nl, No)
     *  or the underscore, which is {@code str.isalnum() or ch == "_"}. */
    public static boolean isWordChar(int cp) {
        if (cp == '_') {
            return true;
        }
        switch (Character.getType(cp)) {
            case Character.UPPERCASE_LETTER:
            case Character.LOWERCASE_LETTER:
            case Character.TITLECASE_LETTER:
            case Character.MODIFIER_LETTER:
            case Character.OTHER_LETTER:
            case Character.DECIMAL_DIGIT_NUMBER:
            case Character.LETTER_NUMBER:
            case Character.OTHER_NUMBER:
                return true;
            default:
                return false;
        }
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

    /** The Unicode property Cased (Lowercase, Uppercase or Lt), which Python's final sigma
     *  reads. */
    static boolean isCased(int cp) {
        return Character.isLowerCase(cp) || Character.isUpperCase(cp)
                || Character.isTitleCase(cp);
    }

    /** The Unicode property Case_Ignorable (Mn, Me, Cf, Lm, Sk and the word-break classes
     *  MidLetter, MidNumLet and Single_Quote), which Python's final sigma skips. */
    static boolean isCaseIgnorable(int cp) {
        switch (Character.getType(cp)) {
            case Character.NON_SPACING_MARK:
            case Character.ENCLOSING_MARK:
            case Character.FORMAT:
            case Character.MODIFIER_LETTER:
            case Character.MODIFIER_SYMBOL:
                return true;
            default:
                break;
        }
        switch (cp) {
            case 0x27: case 0x2E: case 0x3A: case 0xB7: case 0x387: case 0x55F: case 0x5F4:
            case 0x2018: case 0x2019: case 0x2024: case 0x2027: case 0xFE13: case 0xFE52:
            case 0xFE55: case 0xFF07: case 0xFF0E: case 0xFF1A:
                return true;
            default:
                return false;
        }
    }

    /**
     * Python's {@code str.lower()}: each code point's simple lowercase mapping, except U+0130
     * (which becomes "i" and U+0307, its full mapping) and the capital sigma, which becomes
     * final (U+03C2) after a cased character (case-ignorable ones skipped between) and not
     * before one.
     */
    public static String lower(String text) {
        return thalabus.procedures.scoring.Tokens.remembered(LOWERED, text, Texts::lowered);
    }

    /** Lowered texts, by text: a phrase's fit and fusion read each hit's text, and the same
     *  fragments come back for many phrases ({@code shared_words} is cached in Python too). */
    private static final java.util.Map<String, String> LOWERED =
            new java.util.concurrent.ConcurrentHashMap<>();

    private static String lowered(String text) {
        String ascii = thalabus.procedures.scoring.Tokens.asciiLower(text);
        if (ascii != null) {
            return ascii;
        }
        int[] cps = text.codePoints().toArray();
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < cps.length; i++) {
            int cp = cps[i];
            if (cp == 0x130) {
                out.append("i\u0307");
            } else if (cp == 0x3A3) {
                out.appendCodePoint(finalSigma(cps, i) ? 0x3C2 : 0x3C3);
            } else {
                out.appendCodePoint(Character.toLowerCase(cp));
            }
        }
        return out.toString();
    }

    /** CPython's {@code handle_capital_sigma}: whether the sigma at {@code i} ends a word. */
    private static boolean finalSigma(int[] cps, int i) {
        int j = i - 1;
        while (j >= 0 && isCaseIgnorable(cps[j])) {
            j--;
        }
        if (j < 0 || !isCased(cps[j])) {
            return false;
        }
        j = i + 1;
        while (j < cps.length && isCaseIgnorable(cps[j])) {
            j++;
        }
        return j == cps.length || !isCased(cps[j]);
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
        String low = lower(text);
        int start = -1;
        for (int i = 0; i < low.length(); ) {
            int cp = low.codePointAt(i);
            if (isWordChar(cp)) {
                if (start < 0) {
                    start = i;
                }
            } else if (start >= 0) {
                out.add(low.substring(start, i));
                start = -1;
            }
            i += Character.charCount(cp);
        }
        if (start >= 0) {
            out.add(low.substring(start));
        }
        return out;
    }
}
