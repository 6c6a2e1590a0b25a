"""Checks: plain functions over recordings, one module per protocol surface."""
