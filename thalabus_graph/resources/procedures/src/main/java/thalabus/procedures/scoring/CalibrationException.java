package thalabus.procedures.scoring;

/**
 * The Java form of {@code thalabus_graph.errors.ConfigurationError} as the calibration raises
 * it: a calibration file that does not read, or a calibration without the map a source needs.
 * {@link #field()} names the file's field at fault (null: the file as a whole, or no field).
 */
public final class CalibrationException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final String field;

    CalibrationException(String message, String field) {
        super(message);
        this.field = field;
    }

    /** The calibration file's field at fault ({@code sources.default.slope}), or null. */
    public String field() {
        return field;
    }
}
