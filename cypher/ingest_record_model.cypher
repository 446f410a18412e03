// The embedding model whose vectors an ingest computed ($model_id, the embedder's model_id),
// one node per model: a query embedding with another model is warned about
// (search_phrase's size row lists them), and the calibration follows the query's embedder.
MERGE (m:EmbeddingModel {model_id: $model_id})
RETURN m.model_id AS model_id
