"""Memory that works by itself in hosts with hooks (Claude Code, Gemini CLI): the hook command
(`client`, standard library only), the helper process it talks to (`daemon`), what each event does
(`events`) and the transcript reader (`transcript`)."""
