"""Test helpers shared by the unit, integration and benchmark suites (never shipped)."""
