"""Tests of the checks against the reference server and its broken variants (fixtures live in each module)."""
