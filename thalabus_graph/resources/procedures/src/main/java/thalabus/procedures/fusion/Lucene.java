package thalabus.procedures.fusion;

import java.text.Normalizer;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The Java form of {@code thalabus_graph/lucene.py}: user text as an inert Lucene query string.
 * Apostrophes become spaces (or stay inside a word), quotes and always-separating punctuation
 * go, {@code . , ; :} stay only between two word characters ({@code 3.5}, {@code example.org},
 * as the analyzers index them), spaces collapse, the text is lowercased as Python lowercases
 * it, and every Lucene special character left is backslash-escaped: no user text becomes
 * Lucene syntax ({@code AND}, {@code OR}, {@code NOT} are plain lowercase words).
 *
 * <p>A term is searched in its NFC form and, when it differs, its NFKC form too. The rules run
 * on code points with Python's {@code \w} and {@code \s} ({@link Texts}), not with
 * {@code java.util.regex}, whose look-behind and {@code \w} differ from Python's.
 */
public final class Lucene {
    /** The Java form of {@code MAX_QUERY_TERMS}: most analyzed terms a bag-of-words query may
     *  carry (Lucene refuses a boolean query of more than 1,024 clauses). */
    public static final int MAX_QUERY_TERMS = 1000;

    private static final String APOSTROPHES = "'\u2018\u2019\u02bc\u0060\u00b4";
    private static final String QUOTES_AND_PUNCT = "\"\u201c\u201d\u201e\u00ab\u00bb!?()[]{}<>";
    private static final String MID_PUNCT = ".,;:";
    private static final String LUCENE_SPECIAL = "+-&|!(){}[]^\"~*?:\\/";

    private Lucene() {}

    /** Whether the code point is an ideograph or kana ({@code _IDEOGRAPHIC}): the standard
     *  tokenizer makes one token of each. */
    static boolean isIdeographic(int cp) {
        return (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x3400 && cp <= 0x4DBF)
                || (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xF900 && cp <= 0xFAFF)
                || (cp >= 0x20000 && cp <= 0x3FFFF);
    }

    private static boolean isWordAt(int[] cps, int i) {
        return i >= 0 && i < cps.length && Texts.isWordChar(cps[i]);
    }

    /**
     * The Java form of {@code normalise}: apostrophes to spaces (with {@code keepApostrophes},
     * one inside a word stays as {@code '}), quotes and separating punctuation removed,
     * {@code . , ; :} kept only between two word characters, spaces collapsed and trimmed.
     */
    public static String normalise(String term, boolean keepApostrophes) {
        int[] cps = term.codePoints()
                .map(cp -> APOSTROPHES.indexOf(cp) >= 0 ? (keepApostrophes ? '\'' : ' ') : cp)
                .toArray();
        if (keepApostrophes) {
            int[] in = cps.clone();
            for (int i = 0; i < in.length; i++) {
                if (in[i] == '\'' && (!isWordAt(in, i - 1) || !isWordAt(in, i + 1))) {
                    cps[i] = ' ';
                }
            }
        }
        for (int i = 0; i < cps.length; i++) {
            if (QUOTES_AND_PUNCT.indexOf(cps[i]) >= 0) {
                cps[i] = ' ';
            }
        }
        return collapseSpaces(looseMidPunct(cps));
    }

    /** {@code (?<!\w)[.,;:]+|[.,;:]+(?!\w)} replaced by one space per match, as Python's
     *  {@code re.sub} scans: a run after a non-word character goes whole; a run after a word
     *  character goes whole before a non-word character, and before a word character all of
     *  it goes but a single mark between two word characters. */
    private static int[] looseMidPunct(int[] cps) {
        List<Integer> out = new ArrayList<>(cps.length);
        int i = 0;
        while (i < cps.length) {
            if (MID_PUNCT.indexOf(cps[i]) < 0) {
                out.add(cps[i++]);
                continue;
            }
            int j = i;
            while (j < cps.length && MID_PUNCT.indexOf(cps[j]) >= 0) {
                j++;
            }
            if (!isWordAt(cps, i - 1) || !isWordAt(cps, j)) {
                out.add((int) ' ');
            } else if (j - i >= 2) {
                out.add((int) ' ');  // all but the last mark (the look-ahead backs off one)
                out.add((int) ' ');  // the last mark, after a mark
            } else {
                out.add(cps[i]);
            }
            i = j;
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    /** {@code \s+} to one space, then Python's {@code strip()}. */
    private static String collapseSpaces(int[] cps) {
        StringBuilder out = new StringBuilder();
        boolean space = false;
        for (int cp : cps) {
            if (Texts.isSpace(cp)) {
                space = true;
                continue;
            }
            if (space && out.length() > 0) {
                out.append(' ');
            }
            space = false;
            out.appendCodePoint(cp);
        }
        return out.toString();
    }

    /** The Java form of {@code escape}: every Lucene special character backslash-escaped. */
    public static String escape(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (LUCENE_SPECIAL.indexOf(c) >= 0) {
                out.append('\\');
            }
            out.append(c);
        }
        return out.toString();
    }

    /** The Java form of {@code words}: the normalised, lowercased words of a term. */
    public static List<String> words(String term, boolean keepApostrophes) {
        List<String> out = new ArrayList<>();
        for (String w : Texts.lower(normalise(term, keepApostrophes)).split(" ", -1)) {
            if (!w.isEmpty()) {
                out.add(w);
            }
        }
        return out;
    }

    /** The Java form of {@code token_cost}: one token per {@code MAX_TOKEN_LENGTH} code
     *  points of each run of non-ideographic word characters, one per any other code point. */
    public static int tokenCost(String word) {
        int cost = 0;
        int run = 0;
        for (int cp : word.codePoints().toArray()) {
            boolean runChar = Texts.isWordChar(cp) && !isIdeographic(cp);
            if (runChar) {
                run++;
                continue;
            }
            cost += (run + MAX_TOKEN_LENGTH - 1) / MAX_TOKEN_LENGTH + 1;
            run = 0;
        }
        return cost + (run + MAX_TOKEN_LENGTH - 1) / MAX_TOKEN_LENGTH;
    }

    /** The Java form of {@code MAX_TOKEN_LENGTH}: the standard tokenizer cuts a longer token. */
    public static final int MAX_TOKEN_LENGTH = 255;

    /** The Java form of {@code _variants}: the word lists a term is searched as, its NFC and
     *  NFKC forms, each with apostrophes split and, when it differs, kept. */
    static List<List<String>> variants(String term) {
        Set<String> texts = new LinkedHashSet<>();
        texts.add(Normalizer.normalize(term, Normalizer.Form.NFC));
        texts.add(Normalizer.normalize(term, Normalizer.Form.NFKC));
        List<List<String>> forms = new ArrayList<>();
        for (String text : texts) {
            for (List<String> found : List.of(words(text, false), words(text, true))) {
                if (!found.isEmpty() && !forms.contains(found)) {
                    forms.add(found);
                }
            }
        }
        return forms;
    }

    /** The Java form of {@code _split_ideographs}: a word with each ideograph a word of its
     *  own. */
    static List<String> splitIdeographs(String word) {
        if (word.codePoints().noneMatch(Lucene::isIdeographic)) {
            return List.of(word);
        }
        List<String> out = new ArrayList<>();
        StringBuilder part = new StringBuilder();
        for (int cp : word.codePoints().toArray()) {
            if (isIdeographic(cp)) {
                if (part.length() > 0) {
                    out.add(part.toString());
                    part.setLength(0);
                }
                out.add(new String(Character.toChars(cp)));
            } else {
                part.appendCodePoint(cp);
            }
        }
        if (part.length() > 0) {
            out.add(part.toString());
        }
        return out;
    }

    /** The Java form of {@code phrase_query}: a phrase query of each variant's words, joined
     *  by OR ("" when nothing is left). */
    public static String phraseQuery(String term) {
        List<String> phrases = new ArrayList<>();
        for (List<String> found : variants(term)) {
            List<String> escaped = new ArrayList<>();
            found.forEach(w -> escaped.add(escape(w)));
            phrases.add("\"" + String.join(" ", escaped) + "\"");
        }
        return String.join(" OR ", phrases);
    }

    /**
     * The Java form of {@code terms_query}: a Lucene query matching any word of {@code term}.
     * The first distinct words (ideographs one by one) are kept while their
     * {@link #tokenCost} fits in {@code maxTerms}; a word that alone would overflow what is
     * left is skipped.
     */
    public static String termsQuery(String term, int maxTerms) {
        Set<String> seen = new LinkedHashSet<>();
        int budget = maxTerms;
        for (List<String> found : variants(term)) {
            for (String w : found) {
                for (String part : splitIdeographs(w)) {
                    int cost = tokenCost(part);
                    if (seen.contains(part) || cost > budget) {
                        continue;
                    }
                    seen.add(part);
                    budget -= cost;
                }
            }
        }
        List<String> escaped = new ArrayList<>();
        seen.forEach(w -> escaped.add(escape(w)));
        return String.join(" ", escaped);
    }

    /** {@link #termsQuery} with {@link #MAX_QUERY_TERMS}. */
    public static String termsQuery(String term) {
        return termsQuery(term, MAX_QUERY_TERMS);
    }
}
