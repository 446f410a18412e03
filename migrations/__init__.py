"""The versioned migrations, shipped as ``thalabus_graph._migrations`` (see pyproject.toml).

This file only makes the folder importable in wheels and editable installs; it holds no code.
"""
