"""How Maestro Memory is wired into the programs around it, one module per program.

=====================  ===================================================================
``hooks``              the hook runtime every agent runs (``maestroctl hook <tool> <event>``)
``claude_settings``    Claude Code: its settings.json hooks (``maestroctl integrate claude``)
``codex_settings``     Codex CLI: its config.toml hooks (``maestroctl integrate codex``)
``gemini_settings``    Gemini CLI: its settings.json hooks (``maestroctl integrate gemini``)
``agent_settings``     what the three settings writers share (the hook command, atomic writes)
``agent_checks``       ``maestroctl doctor``'s checks of each agent's wiring
``mcp_server``         the MCP server any MCP-speaking agent starts (``maestroctl mcp``)
``mcp_tools``          its tools: names, schemas, annotations, argument check, the Client call
``gitmerge``           the git merge driver for the memory files (``maestroctl git-setup``)
``service``            the systemd / launchd service files (``maestroctl service``)
=====================  ===================================================================

Nothing loads here: each module is imported by the command that needs it.
"""
