package thalabus.procedures;

import java.util.stream.Stream;

import org.neo4j.procedure.Description;
import org.neo4j.procedure.Procedure;

/** {@code thalabus.version()}: which engine version (and rule sources) this plugin implements. */
public final class Version {
    /** One row: the engine version the plugin was built for. */
    public static final class Row {
        public final String version;

        Row(String version) {
            this.version = version;
        }
    }

    @Procedure(name = "thalabus.version")
    @Description("The thalabus-graph engine version this plugin implements.")
    public Stream<Row> version() {
        return Stream.of(new Row(BuildInfo.version()));
    }
}
