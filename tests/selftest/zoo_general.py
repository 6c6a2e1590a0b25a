"""Broken servers for the GEN-* requirements that no surface engineer owns.

Ownership (so each GEN requirement has exactly one author of its broken servers):

==============  ======================  ==========================
group           owner                   module
==============  ======================  ==========================
GEN-BASE        invoke engineer         zoo_invoke.py
GEN-ERR         invoke engineer         zoo_invoke.py
GEN-RATE        invoke engineer         zoo_invoke.py
GEN-SESS        AG-UI engineer          zoo_agui.py
GEN-AGENT       MCP engineer            zoo_mcp.py
GEN-OPEN        (UNSPECIFIED: nothing to break)
==============  ======================  ==========================

Every testable GEN id of the catalog falls in an owned group, so this module registers
nothing today; a new GEN group without an owner gets its broken servers here.
"""
