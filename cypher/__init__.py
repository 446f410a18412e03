"""The named Cypher statements, shipped as ``thalabus_graph._cypher`` (see pyproject.toml).

This file only makes the folder importable in wheels and editable installs; it holds no code.
"""
