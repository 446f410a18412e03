"""Phrases about topics the sample corpus (``thalabus_graph/resources/sample_corpus.jsonl``:
asylum decisions in German, English and French, and five stories of Bob the cat) lacks, and
phrases about topics it holds with the documents that hold them.

They check the shipped calibration's phrase gate where nothing was fitted
(``benchmarks/calibration.py --sample``, ``tests/integration/test_absent_topics.py``):
an absent topic must return nothing at the defaults, a present one its documents. Several
languages, the corpus's own and others (Spanish and Italian have no document there).
"""

from __future__ import annotations

ABSENT: tuple[tuple[str, str], ...] = (
    ("en", "chocolate cake recipe"),
    ("en", "quantum chromodynamics lattice simulation"),
    ("en", "stock market prices of semiconductor companies"),
    ("en", "how to change a car tyre"),
    ("en", "football world cup final"),
    ("en", "photosynthesis in plants"),
    ("en", "symptoms of type 2 diabetes"),
    ("en", "best hiking trails in the Alps"),
    ("en", "tax deduction for home office expenses"),
    ("en", "mortgage interest rates for first-time buyers"),
    ("de", "Rezept für Apfelstrudel"),
    ("de", "Wartung einer Wärmepumpe im Winter"),
    ("de", "Ergebnisse der Fußball-Bundesliga"),
    ("de", "Nebenkostenabrechnung im Mietrecht"),
    ("de", "Gletscherschmelze durch den Klimawandel"),
    ("fr", "recette de la quiche lorraine"),
    ("fr", "réparation d'un vélo électrique"),
    ("fr", "les peintres impressionnistes au musée d'Orsay"),
    ("fr", "prévisions météo pour le week-end"),
    ("es", "receta de paella valenciana"),
    ("es", "campeonato de fórmula uno"),
    ("es", "cultivo de tomates en invernadero"),
    ("it", "la storia del Rinascimento a Firenze"),
    ("it", "come preparare il tiramisù"),
)
"""(language, phrase) of topics no sample document is about."""

PRESENT: tuple[tuple[str, str, frozenset[str]], ...] = (
    ("en", "conversion to Christianity", frozenset({"docid-1001", "docid-1002", "docid-1003"})),
    ("en", "deserter from military service", frozenset({"docid-1004", "docid-1005"})),
    ("en", "Bob the cat in the snow", frozenset({"docid-2004"})),
    ("en", "risk of persecution in Iran",
     frozenset({"docid-1002", "docid-1011", "docid-1015", "docid-1022"})),
    ("de", "Verfolgung wegen Homosexualität", frozenset({"docid-1015"})),
    ("fr", "fuite interne à Kaboul", frozenset({"docid-1006"})),
    ("en", "female genital mutilation", frozenset({"docid-1019"})),
    ("en", "blood feud in Iraq", frozenset({"docid-1008"})),
    ("en", "Dublin transfer to Italy", frozenset({"docid-1009"})),
    ("en", "Palestinian refugee and UNRWA", frozenset({"docid-1016"})),
    ("de", "kurdischer Aktivist aus der Türkei", frozenset({"docid-1017"})),
    ("en", "Yazidi woman from Sinjar", frozenset({"docid-1012"})),
    ("fr", "communauté bahá'íe en Iran", frozenset({"docid-1022"})),
    ("en", "interpreter for foreign troops", frozenset({"docid-1024"})),
    ("fr", "recours tardif irrecevable", frozenset({"docid-1025"})),
    ("en", "the cat and the squirrel", frozenset({"docid-2002"})),
    ("en", "learning C++ programming", frozenset({"docid-2005"})),
    ("en", "Eritrean national service", frozenset({"docid-1005", "docid-1014"})),
    ("fr", "journaliste syrien persécuté", frozenset({"docid-1010"})),
    ("en", "unaccompanied minor from Afghanistan", frozenset({"docid-1013"})),
    ("es", "conversión al cristianismo", frozenset({"docid-1001", "docid-1002", "docid-1003"})),
    ("it", "disertore dal servizio militare", frozenset({"docid-1004", "docid-1005"})),
)
"""(language, phrase, the documents about it) of topics the sample corpus holds."""
