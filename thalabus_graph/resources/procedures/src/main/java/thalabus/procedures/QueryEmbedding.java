package thalabus.procedures;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A phrase's query vector from the OpenAI-compatible embeddings endpoint the server knows:
 * {@code THALABUS_EMBEDDER_URL} (and {@code THALABUS_EMBEDDER_MODEL},
 * {@code THALABUS_EMBEDDER_API_KEY}) in the server process's environment, or the JVM system
 * properties of the same names. The same request the engine's {@code OpenAIEmbedder} sends.
 */
final class QueryEmbedding {
    private static final HttpClient CLIENT = HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(10)).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    private QueryEmbedding() {}

    static List<Double> embed(String text, EngineSettings settings) {
        String url = configured("THALABUS_EMBEDDER_URL");
        if (url == null || url.isBlank()) {
            throw new IllegalArgumentException("thalabus.phrase: no query vector given and the "
                    + "server knows no embedding endpoint (set THALABUS_EMBEDDER_URL for the "
                    + "Neo4j process, or pass the vector)");
        }
        String root = url.replaceAll("/+$", "");
        String endpoint = (root.endsWith("/v1") ? root : root + "/v1") + "/embeddings";
        String model = configured("THALABUS_EMBEDDER_MODEL");
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("input", List.of(text));
        body.put("model", model == null || model.isBlank() ? settings.text("embedder_model") : model);
        body.put("encoding_format", "float");
        if (settings.flag("embedder_input_type")) {
            body.put("input_type", "query");
        }
        try {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(endpoint))
                    .timeout(Duration.ofSeconds((long) settings.number("embedder_timeout_seconds")))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
            String key = configured("THALABUS_EMBEDDER_API_KEY");
            if (key != null && !key.isBlank()) {
                request.header("Authorization", "Bearer " + key);
            }
            HttpResponse<String> reply = CLIENT.send(request.build(),
                    HttpResponse.BodyHandlers.ofString());
            if (reply.statusCode() / 100 != 2) {
                throw new IllegalStateException("thalabus.phrase: the embeddings server at "
                        + endpoint + " answered HTTP " + reply.statusCode());
            }
            JsonNode vector = JSON.readTree(reply.body()).path("data").path(0).path("embedding");
            if (!vector.isArray() || vector.isEmpty()) {
                throw new IllegalStateException("thalabus.phrase: the embeddings reply from "
                        + endpoint + " holds no embedding");
            }
            List<Double> out = new ArrayList<>(vector.size());
            vector.forEach(v -> out.add(v.asDouble()));
            return out;
        } catch (IOException e) {
            throw new IllegalStateException("thalabus.phrase: cannot reach the embeddings server "
                    + endpoint + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("thalabus.phrase: interrupted while embedding", e);
        }
    }

    private static String configured(String name) {
        String value = System.getProperty(name);
        return value != null ? value : System.getenv(name);
    }
}
