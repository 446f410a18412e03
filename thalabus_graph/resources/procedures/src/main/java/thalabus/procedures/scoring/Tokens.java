package thalabus.procedures.scoring;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The Java form of {@code thalabus_graph.scoring.tokens}: how the calibration's gate splits
 * text into words, read exactly as Python's {@code re} and {@code str} read it.
 *
 * <p>Python's {@code \w} is a character of Unicode category L* (letters), Nd, Nl or No
 * (numbers), or {@code _}: no combining marks (a Thai or Devanagari vowel sign ends a token)
 * and no other connector punctuation, unlike Java's {@code \w} with or without
 * {@code UNICODE_CHARACTER_CLASS}; so tokens are cut by an explicit test
 * ({@link #isWordChar}). Python's {@code str.lower} is the full lowercase mapping
 * ({@code İ} becomes {@code i̇}, two code points) with the final-sigma rule on cased and
 * case-ignorable neighbours ({@link #lower}), which {@link String#toLowerCase} replaces with
 * word boundaries; lengths and bigrams count code points, not UTF-16 units. What can still
 * differ is the Unicode version of the two runtimes' tables (Python 3.11: 14.0) for characters
 * assigned or recategorised since.
 */
public final class Tokens {
    /** Shortest word the lexical share counts (shorter ones are mostly function words). */
    public static final int SHARE_MIN_LETTERS = 4;

    private Tokens() {}

    /** {@code a < b} as Python compares strings, code point by code point (negative, zero,
     *  positive); Java's {@code compareTo} compares UTF-16 units. */
    public static int compareCodePoints(String a, String b) {
        return Python.compare(a, b);
    }

    /** Python's {@code \w}: a letter, a number (Nd, Nl, No) or an underscore. */
    public static boolean isWordChar(int c) {
        switch (Character.getType(c)) {
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
                return c == '_';
        }
    }

    /** {@code re.findall(r"\w+", text)}: the maximal runs of word characters, in order. */
    public static List<String> words(String text) {
        List<String> out = new ArrayList<>();
        int start = -1;
        int i = 0;
        while (i < text.length()) {
            int c = text.codePointAt(i);
            if (isWordChar(c)) {
                if (start < 0) {
                    start = i;
                }
            } else if (start >= 0) {
                out.add(text.substring(start, i));
                start = -1;
            }
            i += Character.charCount(c);
        }
        if (start >= 0) {
            out.add(text.substring(start));
        }
        return out;
    }

    /** The form {@link #lexicalWords} reads a text in: NFC, then {@link #lower}. */
    public static String fold(String text) {
        return forms(text).folded();
    }

    /** Python's {@code str.lower} ({@link #lower}) of a text, kept with its {@link #fold}. */
    public static String lowered(String text) {
        return forms(text).lowered();
    }

    /** A text's two reading forms; for an ASCII text both are the one lowercased string (NFC
     *  leaves ASCII as it is), so fusion and the gate lower each candidate once. */
    private record Forms(String folded, String lowered) {}

    private static Forms forms(String text) {
        return remembered(FORMS, text, t -> {
            if (isAscii(t)) {
                String lowered = lowerAscii(t);
                return new Forms(lowered, lowered);
            }
            String lowered = lower(t);
            return new Forms(Normalizer.isNormalized(t, Normalizer.Form.NFC)
                    ? lowered : lower(Normalizer.normalize(t, Normalizer.Form.NFC)), lowered);
        });
    }

    private static final VarHandle LONGS =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long HIGH_BITS = 0x8080808080808080L;

    /**
     * {@link #lower} of an ASCII text (A-Z to a-z, nothing else changes), eight characters at
     * a time: for a byte {@code x < 0x80}, {@code x + 0x3f} sets the high bit exactly when
     * {@code x >= 'A'} and {@code x + 0x25} exactly when {@code x > 'Z'}, without a carry into
     * the next byte, so the capitals' high bits shifted down are their 0x20. A candidate's text
     * is read by the fusion and the gate once each phrase; this is 2-3x faster than the JDK's
     * lowering on the same texts.
     */
    static String lowerAscii(String text) {
        byte[] b = text.getBytes(StandardCharsets.ISO_8859_1);
        int i = 0;
        for (; i + 8 <= b.length; i += 8) {
            long w = (long) LONGS.get(b, i);
            long capitals = (w + 0x3f3f3f3f3f3f3f3fL) & ~(w + 0x2525252525252525L) & HIGH_BITS;
            LONGS.set(b, i, w | (capitals >>> 2));
        }
        for (; i < b.length; i++) {
            if (b[i] >= 'A' && b[i] <= 'Z') {
                b[i] += 32;
            }
        }
        return new String(b, StandardCharsets.ISO_8859_1);
    }

    /** Most texts a cache of {@link #remembered} keeps before it starts again (a few
     *  megabytes of candidate texts), give or take the {@link #SIZE_CHECK_EVERY} texts added
     *  between two looks at its size. */
    public static final int REMEMBERED = 2048;
    /** A cache's size is looked at once per this many texts added: a concurrent map's size
     *  sums counters the other search threads are writing, which cost more than a text's
     *  lowering when read on every miss. */
    static final int SIZE_CHECK_EVERY = 64;
    private static final java.util.Map<String, Forms> FORMS =
            new java.util.concurrent.ConcurrentHashMap<>();
    /** Texts added to the caches since the last size check; racy on purpose (a lost increment
     *  only delays a check). */
    private static int added;

    /**
     * {@code form(text)}, kept in {@code cache}: a phrase's candidates are read by several
     * rules, and the same fragments are candidates of many phrases. A full cache is emptied
     * (the next phrases fill it again with what they read).
     */
    public static <T> T remembered(java.util.Map<String, T> cache, String text,
                                   java.util.function.Function<String, T> form) {
        T known = cache.get(text);
        if (known == null) {
            known = form.apply(text);
            if (++added % SIZE_CHECK_EVERY == 0 && cache.size() >= REMEMBERED) {
                cache.clear();
            }
            cache.put(text, known);
        }
        return known;
    }

    /** Whether every character of the text is ASCII (NFC leaves such a text as it is). */
    private static boolean isAscii(String text) {
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) > 0x7F) {
                return false;
            }
        }
        return true;
    }

    /**
     * Python's {@code str.lower}: each code point's full lowercase mapping; a capital sigma is
     * final ({@code ς}) when a cased character precedes it and none follows it, case-ignorable
     * characters skipped on both sides.
     *
     * <p>Each code point's {@link Character#toLowerCase(int)} is that mapping except for
     * {@code İ} (to {@code i̇}) and the capital sigma, which the JDK's
     * {@code toLowerCase(Locale.ROOT)} also treats apart, with another final-sigma rule. ASCII
     * letters are lowered in place: a candidate's text is mostly ASCII, and the JDK's UTF-16
     * lowering looks every character up in the Unicode tables.
     */
    public static String lower(String text) {
        int n = text.length();
        StringBuilder out = new StringBuilder(n + 8);
        int i = 0;
        while (i < n) {
            char ch = text.charAt(i);
            if (ch < 0x80) {
                out.append(ch >= 'A' && ch <= 'Z' ? (char) (ch + 32) : ch);
                i++;
            } else if (ch == '\u0130') {
                out.append("i\u0307");
                i++;
            } else if (ch == '\u03a3') {
                out.append(finalSigma(text, i) ? '\u03c2' : '\u03c3');
                i++;
            } else if (!Character.isSurrogate(ch)) {
                out.append(Character.toLowerCase(ch));
                i++;
            } else {
                int c = text.codePointAt(i);
                out.appendCodePoint(Character.toLowerCase(c));
                i += Character.charCount(c);
            }
        }
        return out.toString();
    }

    private static boolean finalSigma(String text, int at) {
        int j = at;
        int c = 0;
        boolean found = false;
        while (j > 0) {
            c = text.codePointBefore(j);
            j -= Character.charCount(c);
            if (!isCaseIgnorable(c)) {
                found = true;
                break;
            }
        }
        if (!found || !isCased(c)) {
            return false;
        }
        j = at + 1;
        while (j < text.length()) {
            c = text.codePointAt(j);
            if (!isCaseIgnorable(c)) {
                return !isCased(c);
            }
            j += Character.charCount(c);
        }
        return true;
    }

    /** Unicode's Cased: Lu, Ll, Lt, Other_Uppercase or Other_Lowercase. */
    public static boolean isCased(int c) {
        return Character.isLowerCase(c) || Character.isUpperCase(c) || Character.isTitleCase(c);
    }

    /** Unicode's Case_Ignorable: Mn, Me, Cf, Lm, Sk, or word break MidLetter, MidNumLet or
     * Single_Quote. */
    public static boolean isCaseIgnorable(int c) {
        switch (Character.getType(c)) {
            case Character.NON_SPACING_MARK:
            case Character.ENCLOSING_MARK:
            case Character.FORMAT:
            case Character.MODIFIER_LETTER:
            case Character.MODIFIER_SYMBOL:
                return true;
            default:
                break;
        }
        switch (c) {
            case '\'':
            case '.':
            case ':':
            case 0x00b7:
            case 0x0387:
            case 0x055f:
            case 0x05f4:
            case 0x2018:
            case 0x2019:
            case 0x2024:
            case 0x2027:
            case 0xfe13:
            case 0xfe52:
            case 0xfe55:
            case 0xff07:
            case 0xff0e:
            case 0xff1a:
                return true;
            default:
                return false;
        }
    }

    /** How many {@code \w+} tokens {@code text} holds, as written (no folding, any length). */
    public static int wordCount(String text) {
        return words(text).size();
    }

    /**
     * Whether a token holds characters of a script written without spaces between words
     * (Chinese, Japanese kana, Thai, Lao, Khmer, Myanmar).
     */
    public static boolean isSpaceless(String token) {
        return token.codePoints().anyMatch(Tokens::spaceless);
    }

    private static boolean spaceless(int c) {
        return (c >= 0x0e00 && c <= 0x0eff) || (c >= 0x1000 && c <= 0x109f)
                || (c >= 0x1780 && c <= 0x17ff) || (c >= 0x3040 && c <= 0x30ff)
                || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x4e00 && c <= 0x9fff)
                || (c >= 0xf900 && c <= 0xfaff);
    }

    /**
     * A spaceless token's character bigrams holding a character of such a script (a
     * one-character token itself).
     */
    public static List<String> bigrams(String token) {
        int[] points = token.codePoints().toArray();
        if (points.length < 2) {
            return List.of(token);
        }
        List<String> out = new ArrayList<>();
        for (int i = 0; i + 1 < points.length; i++) {
            if (spaceless(points[i]) || spaceless(points[i + 1])) {
                out.add(new String(points, i, 2));
            }
        }
        return out;
    }

    /**
     * The words the lexical share reads: {@code \w+} tokens of the folded text with
     * {@code minLetters} code points or more, and the character bigrams of every token in a
     * script written without spaces (whatever its length).
     */
    public static Set<String> lexicalWords(String text, int minLetters) {
        Set<String> out = new LinkedHashSet<>();
        for (String w : words(fold(text))) {
            if (isSpaceless(w)) {
                out.addAll(bigrams(w));
            } else if (Python.len(w) >= minLetters) {
                out.add(w);
            }
        }
        return out;
    }

    /** {@link #lexicalWords(String, int)} with {@link #SHARE_MIN_LETTERS}. */
    public static Set<String> lexicalWords(String text) {
        return lexicalWords(text, SHARE_MIN_LETTERS);
    }

    /** The distinct lowercased {@code \w+} tokens of {@code text} (null: none), unfolded. */
    public static Set<String> plainWords(String text) {
        if (text == null || text.isEmpty()) {
            return Set.of();
        }
        return new LinkedHashSet<>(words(lower(text)));
    }

    /**
     * Whether {@code word} (a {@code \w+} token) is a whole token of {@code text} (already
     * folded): an occurrence not preceded or followed by a word character; a spaceless
     * script's bigram wherever it occurs.
     */
    public static boolean holdsWord(String text, String word) {
        if (Python.len(word) > 1 && isSpaceless(word)) {
            return text.contains(word);
        }
        int start = text.indexOf(word);
        while (start >= 0) {
            int end = start + word.length();
            if ((start == 0 || !isWordChar(text.codePointBefore(start)))
                    && (end == text.length() || !isWordChar(text.codePointAt(end)))) {
                return true;
            }
            start = text.indexOf(word, start + 1);
        }
        return false;
    }
}
