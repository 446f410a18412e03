package thalabus.procedures.scoring;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The Java form of {@code thalabus_graph.scoring.lexical}: the word features of a phrase among
 * its candidates that the calibration's gate reads besides cosines, with the words of
 * {@link Tokens#lexicalWords} (the reading the gate was fitted on).
 */
public final class Lexical {
    /** Longest phrase (in words) whose words all found in one fragment count as lexical
     * evidence ({@link #covers}). */
    public static final int EXACT_MAX_WORDS = 4;

    private Lexical() {}

    /**
     * The words of a phrase the lexical share looks for: {@link Tokens#lexicalWords}, or, for a
     * phrase without a word of {@link Tokens#SHARE_MIN_LETTERS} letters, every word it has.
     */
    public static Set<String> phraseWords(String phrase) {
        Set<String> words = Tokens.lexicalWords(phrase);
        return words.isEmpty() ? Tokens.lexicalWords(phrase, 1) : words;
    }

    /** Whether a phrase has at least one and at most {@link #EXACT_MAX_WORDS} words. */
    public static boolean isShort(String phrase) {
        int n = Tokens.wordCount(phrase);
        return 0 < n && n <= EXACT_MAX_WORDS;
    }

    /**
     * Whether one of {@code texts} (null entries: not read) holds every word of a short phrase,
     * each as a whole word (a spaceless script's bigrams as substrings); false for a longer
     * phrase or one without words.
     */
    public static boolean covers(String phrase, Iterable<String> texts) {
        if (!isShort(phrase)) {
            return false;
        }
        Set<String> wanted = Tokens.lexicalWords(phrase, 1);
        for (String text : texts) {
            if (text != null) {
                String folded = Tokens.fold(text);
                if (wanted.stream().allMatch(w -> Tokens.holdsWord(folded, w))) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The largest share of the phrase's words found in one candidate's words, in [0, 1]; 0.0
     * for a phrase without words or no candidate.
     */
    public static double shareOf(Set<String> phrase, Collection<? extends Set<String>> candidates) {
        if (phrase.isEmpty()) {
            return 0.0;
        }
        double best = 0.0;
        boolean first = true;
        for (Set<String> found : candidates) {
            Set<String> both = new HashSet<>(phrase);
            both.retainAll(found);
            double share = (double) both.size() / phrase.size();
            if (first || share > best) {
                best = share;
                first = false;
            }
        }
        return best;
    }

    /**
     * The phrase's lexical share among its candidates' texts, the largest share of
     * {@link #phraseWords} found as whole words of one folded text; null when no text was read
     * (every entry null).
     */
    public static Double lexicalShare(String phrase, Iterable<String> texts) {
        List<String> wanted = new ArrayList<>(phraseWords(phrase));
        wanted.sort((a, b) -> a.equals(b) ? 0 : Python.len(a) != Python.len(b)
                ? Integer.compare(Python.len(b), Python.len(a)) : Python.compare(a, b));
        int best = 0;
        boolean read = false;
        for (String text : texts) {
            if (text == null) {
                continue;
            }
            read = true;
            if (best == wanted.size()) {
                break;
            }
            String folded = Tokens.fold(text);
            List<String> present = present(folded, wanted, best);
            if (present.size() > best) {
                int held = 0;
                for (String w : present) {
                    if (Tokens.holdsWord(folded, w)) {
                        held++;
                    }
                }
                best = Math.max(best, held);
            }
        }
        if (!read) {
            return null;
        }
        return wanted.isEmpty() ? 0.0 : (double) best / wanted.size();
    }

    /** The wanted words found in {@code folded} as substrings, cut short once the words left
     * cannot beat {@code best}. */
    private static List<String> present(String folded, List<String> wanted, int best) {
        List<String> present = new ArrayList<>(wanted.size());
        int missingAllowed = wanted.size() - best - 1;
        for (String w : wanted) {
            if (folded.contains(w)) {
                present.add(w);
            } else {
                missingAllowed -= 1;
                if (missingAllowed < 0) {
                    return present;
                }
            }
        }
        return present;
    }
}
