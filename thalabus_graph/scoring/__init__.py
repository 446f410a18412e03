"""Scores: how a phrase's hits become one ranked list on a scale that reads as relevance.

Pure computation on scores, texts and fragments (no Neo4j), so every rule is testable on
hand-made numbers; the search (``thalabus_graph.search``) calls it. One module per job:

- ``fusion``: the fusion rules that merge a phrase's vector and full-text hits.
- ``scale``: the calibrated scale a phrase's fused fragments are put on (``PhraseScale``).
- ``calibration``: the calibration of one embedding model, what a search computes with it.
- ``lexical``: the lexical features its phrase gate reads (shared words, short phrases held).
- ``tokens``: how text is split into words, for the lexical features and for fusion.
- ``fitting``: fitting a calibration on labelled data (``thalabus-graph calibrate``).
- ``calibration_file``: a calibration's stored JSON form, read, written and checked.
- ``reliability``: how well calibrated scores read as probabilities (reliability diagram, ECE).
"""
