"""The queries the integration suite runs on the sample corpus, in one list.

``FILTER_CASES`` pairs each pure filter with the documents it must return (the engine test
checks them); ``SCORED_QUERIES`` are the phrase, text and mixed queries of the engine, explain
and pushdown tests with the scope they run in. ``SAMPLE_QUERIES`` is every one of them: the
plan-readers test checks on each that explain's plan is the profiled run's plan.
"""

from __future__ import annotations

from typing import Any

from tests.integration.sample import docs_where, has

ALL = docs_where(lambda d: True)
IQ = docs_where(has("COUNTRY_OF_ORIGIN", "IQ"))
SY = docs_where(has("COUNTRY_OF_ORIGIN", "SY"))
GRANTED = docs_where(has("DECISION", "granted"))
REJECTED = docs_where(has("DECISION", "rejected"))

FILTER_CASES: list[tuple[str, set[str]]] = [
    ("COUNTRY_OF_ORIGIN=IQ", IQ),
    ("COUNTRY_OF_ORIGIN=IQ,SY", IQ | SY),
    ("COUNTRY_OF_ORIGIN = IQ , SY", IQ | SY),
    ("COUNTRY_OF_ORIGIN=IQ AND DECISION=granted", IQ & GRANTED),
    ("COUNTRY_OF_ORIGIN=IQ and not DECISION=granted", IQ - GRANTED),
    ("NOT NOT COUNTRY_OF_ORIGIN=IQ", IQ),
    ("DECISION='granted asylum'", docs_where(has("DECISION", "granted asylum"))),
    ("DECISION='temporary admission'", docs_where(has("DECISION", "temporary admission"))),
    ("DECISION=rejected OR PROCEDURE=Dublin", REJECTED | docs_where(has("PROCEDURE", "Dublin"))),
    ("COUNTRY_OF_ORIGIN=IQ OR COUNTRY_OF_ORIGIN=SY AND DECISION=rejected", IQ | (SY & REJECTED)),
    ("(COUNTRY_OF_ORIGIN=IQ OR COUNTRY_OF_ORIGIN=SY) AND DECISION=granted", (IQ | SY) & GRANTED),
    ("PROCEDURE=art$16", docs_where(has("PROCEDURE", "art$16"))),
    ("TAG='x}y'", docs_where(has("TAG", "x}y"))),
    ("TAG=treats$daily", docs_where(has("TAG", "treats$daily"))),
    ("COUNTRY_OF_ORIGIN=XX", set()),
    ("COUNTRY_OF_ORIGIN=IQ AND CHARACTER=Bob", set()),
    ("", ALL),
]

SPECIAL_TEXTS = [
    "'a:b (c) AND * ~ / \\\\ {x}'",
    '"\\"quoted\\" \\\\ back (AND) OR *~/:"',
    "'AND'", "'OR NOT'", "@'$x}'", "'\"'",
]

SCORED_QUERIES: list[tuple[str, dict[str, Any]]] = [
    ('"Konversion zum Christentum"', {}),
    ('"religious conversion to Christianity" AND COUNTRY_OF_ORIGIN=AF', {}),
    ('"asylum seeker" AND COUNTRY_OF_ORIGIN=IQ', {}),
    ('"asylum seeker" AND NOT COUNTRY_OF_ORIGIN=IQ', {}),
    ('"asylum seeker" AND NOT COUNTRY_OF_ORIGIN=IQ', {"ontology_id": "asylum"}),
    ('"a cat climbs a tall tree" OR "a squirrel friend"', {}),
    ('("a cat climbs a tall tree" OR "a squirrel friend") AND CHARACTER=Sammy', {}),
    ('"kitchen floor" AND "cleanup"', {}),
    ("'kitchen floor'", {}),
    ("'Jane\\'s'", {}),
    ("@'C++'", {}),
    ("@'c++'", {}),
    ("@' AND '", {}),
    *((text, {}) for text in SPECIAL_TEXTS),
    ("NOT COUNTRY_OF_ORIGIN=IQ", {"ontology_id": "asylum"}),
    ("NOT COUNTRY_OF_ORIGIN=IQ", {}),
    ('"adventure"', {"ontology_id": "stories"}),
    ("", {"ontology_id": "stories"}),
    ('"cat" AND CHARACTER=Jane', {"ontology_id": "stories"}),
    ('"cat" AND CHARACTER=Jane', {"ontology_id": "asylum"}),
    ('"Bob the cat" OR CHARACTER=Sammy', {}),
    ('"kitchen floor" AND CHARACTER=Jane OR TAG=winter', {}),
    ("(\"cat\" OR 'tree') AND NOT CHARACTER=Sammy AND TAG=home", {}),
    ('"cat" AND NOT CHARACTER=Sammy', {}),
    ("\"cat\" AND TAG='x}y'", {}),
    ('"asylum" AND (COUNTRY_OF_ORIGIN=IQ OR (DECISION=granted AND NOT COUNTRY_OF_ORIGIN=SY))',
     {}),
    ('"military service" AND NOT ("Taliban" OR TAG=home)', {}),
]

SAMPLE_QUERIES: list[tuple[str, dict[str, Any]]] = [
    *((query, {}) for query, _ in FILTER_CASES), *SCORED_QUERIES]
