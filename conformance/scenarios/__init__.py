"""Scenarios: each records one exchange (or a short conversation) with the server."""
