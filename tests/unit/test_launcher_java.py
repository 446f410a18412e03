"""The JVM flags the launcher adds per JDK: pure, no JVM started."""

from __future__ import annotations

from pathlib import Path

import pytest

from thalabus_graph.graph.launcher.java import JavaInstallation, _version_flags

VECTOR_API = "--add-modules=jdk.incubator.vector"


@pytest.mark.parametrize("major", [17, 18, 20])
def test_a_jdk_before_21_gets_no_vector_api(major: int) -> None:
    """Lucene uses the Vector API only from JDK 21 (Neo4j 5.26's Lucene 9.11 and later); an
    older JDK would refuse nothing but gain nothing, so the flag is left out."""
    assert VECTOR_API not in _version_flags(JavaInstallation(Path("/jdk"), major))


@pytest.mark.parametrize("major", [21, 22, 23, 25])
def test_a_jdk_21_or_newer_gets_the_vector_api_once(major: int) -> None:
    flags = _version_flags(JavaInstallation(Path("/jdk"), major))
    assert flags.count(VECTOR_API) == 1
    assert ("--sun-misc-unsafe-memory-access=allow" in flags) is (major >= 23)
