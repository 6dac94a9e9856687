"""impact_ls for coding agents: the Model Context Protocol server behind ``impact-ls mcp``.

``server.py`` declares the four tools on the official ``mcp`` SDK; ``engines.py`` keeps one
``Engine`` per project root; ``blast.py`` and ``callers.py`` shape what the one analysis API
returns into the audit-first results of ``shapes.py``. Nothing here analyzes code itself.
"""
