package thalabus.procedures.scoring;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.Comparator;

/**
 * The few Python built-ins whose Java look-alikes answer differently, as the ported rules need
 * them: {@code min}/{@code max} (the first argument on a tie or a NaN, where {@link Math#max}
 * prefers NaN and orders -0.0 below 0.0), string order by code point ({@link String#compareTo}
 * orders UTF-16 units), {@code len} in code points, {@code repr} of a string, and the
 * {@code f}/{@code g} number formats (correctly rounded, half to even, where
 * {@link String#format} rounds a decimal form half up).
 */
final class Python {
    /** Python's string order: by code point. */
    static final Comparator<String> CODE_POINT_ORDER = Python::compare;

    private Python() {}

    /** {@code max(a, b)}: {@code b} only when it is greater. */
    static double max(double a, double b) {
        return b > a ? b : a;
    }

    /** {@code min(a, b)}: {@code b} only when it is smaller. */
    static double min(double a, double b) {
        return b < a ? b : a;
    }

    /** {@code len(s)}: code points. */
    static int len(String s) {
        return s.codePointCount(0, s.length());
    }

    /** Python's comparison of two strings (code point by code point). */
    static int compare(String a, String b) {
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

    /** {@code repr(s)} of a string: quoted, escapes for what Python does not print. */
    static String repr(String s) {
        char quote = s.indexOf('\'') >= 0 && s.indexOf('"') < 0 ? '"' : '\'';
        StringBuilder out = new StringBuilder().append(quote);
        s.codePoints().forEach(c -> {
            if (c == quote || c == '\\') {
                out.append('\\').appendCodePoint(c);
            } else if (c == '\t') {
                out.append("\\t");
            } else if (c == '\n') {
                out.append("\\n");
            } else if (c == '\r') {
                out.append("\\r");
            } else if (c < ' ' || c == 0x7f) {
                out.append(String.format("\\x%02x", c));
            } else if (c < 0x7f || printable(c)) {
                out.appendCodePoint(c);
            } else if (c <= 0xff) {
                out.append(String.format("\\x%02x", c));
            } else if (c <= 0xffff) {
                out.append(String.format("\\u%04x", c));
            } else {
                out.append(String.format("\\U%08x", c));
            }
        });
        return out.append(quote).toString();
    }

    private static boolean printable(int c) {
        switch (Character.getType(c)) {
            case Character.CONTROL:
            case Character.FORMAT:
            case Character.SURROGATE:
            case Character.PRIVATE_USE:
            case Character.UNASSIGNED:
            case Character.LINE_SEPARATOR:
            case Character.PARAGRAPH_SEPARATOR:
            case Character.SPACE_SEPARATOR:
                return false;
            default:
                return true;
        }
    }

    /** {@code f"{x:.{digits}f}"}: the exact binary value rounded half to even. */
    static String fixed(double x, int digits) {
        if (Double.isNaN(x)) {
            return "nan";
        }
        if (Double.isInfinite(x)) {
            return x > 0 ? "inf" : "-inf";
        }
        String text = new BigDecimal(x).setScale(digits, RoundingMode.HALF_EVEN).toPlainString();
        return negative(x) && !text.startsWith("-") ? "-" + text : text;
    }

    /** {@code f"{x:g}"}: six significant digits, fixed or scientific, trailing zeros cut. */
    static String general(double x) {
        if (Double.isNaN(x)) {
            return "nan";
        }
        if (Double.isInfinite(x)) {
            return x > 0 ? "inf" : "-inf";
        }
        String sign = negative(x) ? "-" : "";
        if (x == 0.0) {
            return sign + "0";
        }
        BigDecimal rounded = new BigDecimal(Math.abs(x)).round(new MathContext(6, RoundingMode.HALF_EVEN));
        int exponent = rounded.precision() - rounded.scale() - 1;
        if (exponent >= -4 && exponent < 6) {
            return sign + strip(rounded.setScale(Math.max(0, 5 - exponent), RoundingMode.UNNECESSARY)
                    .toPlainString());
        }
        String digits = rounded.unscaledValue().toString();
        String mantissa = strip(digits.charAt(0) + "." + digits.substring(1));
        String power = String.format("%02d", Math.abs(exponent));
        return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + power;
    }

    private static boolean negative(double x) {
        return Double.doubleToRawLongBits(x) < 0;
    }

    private static String strip(String decimal) {
        if (decimal.indexOf('.') < 0) {
            return decimal;
        }
        String out = decimal.replaceAll("0+$", "");
        return out.endsWith(".") ? out.substring(0, out.length() - 1) : out;
    }
}
