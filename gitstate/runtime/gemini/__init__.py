"""Gemini CLI (npm `@google/gemini-cli`, a node bundle) as an agent runtime. What follows was
read from the bundle of Gemini CLI 0.61.0 and checked by running `gemini -p` against a
scripted Gemini API (tests/runtime/scripted_gemini.py).

Hooks
  Read from `hooks` in `.gemini/settings.json` (the project's; also the user's
  `~/.gemini/settings.json`), in Claude Code's shape: `{"hooks": {"<Event>": [{"matcher":
  "...", "hooks": [{"type": "command", "command": "...", "timeout": <ms>}]}]}}`. Events:
  SessionStart, SessionEnd, BeforeAgent (a prompt, before the model's first request),
  AfterAgent (the turn's end, with `prompt_response`), BeforeTool, AfterTool, PreCompress,
  Notification (`notification_type: "ToolPermission"`), BeforeModel, AfterModel,
  BeforeToolSelection. A tool event's matcher is a regular expression of the tool's name;
  SessionStart's and SessionEnd's are compared whole with the source (startup, resume, clear)
  or the reason; none, "" or "*" match all. PreCompress fires with `trigger: "auto"` before
  every model request (the check of whether to compress, not a compression): gitstate does
  not take it for one. There are no sub-agent start or stop events. In `-p` mode
  SessionStart, BeforeAgent, BeforeTool, AfterTool, AfterAgent and SessionEnd (`reason:
  "exit"`) fire, in that order.

  Input (stdin JSON): every event has `session_id` (a UUID; also `$GEMINI_SESSION_ID` in a
  hook's environment, with `$GEMINI_PROJECT_DIR` and `$CLAUDE_PROJECT_DIR`), `transcript_path`,
  `cwd`, `hook_event_name`, `timestamp`; no `model`. SessionStart: `source`. BeforeAgent:
  `prompt`. AfterAgent: `prompt`, `prompt_response`, `stop_hook_active`. BeforeTool and
  AfterTool: `tool_name`, `tool_input` (AfterTool adds `tool_response` with `llmContent`);
  no call id. The shell tool is `run_shell_command` with `{"command": "..."}`; the sub-agent
  tool `invoke_agent` with `{"agent_name", "prompt"}`.

  Output (stdout, JSON; else stderr is read): `continue`, `stopReason`, `systemMessage`,
  `suppressOutput`, `decision` ("block"/"deny" refuse), `reason`, `hookSpecificOutput`.
  `hookSpecificOutput.additionalContext` is read at SessionStart (put before the prompt as
  `<hook_context>...</hook_context>`), BeforeAgent and AfterTool (appended to the call's
  output); its `<` and `>` reach the model as `&lt;` and `&gt;`. BeforeTool refuses with
  `decision: "deny"` and `reason` (Claude Code's `permissionDecision` is not read): the tool
  does not run and the model reads `{"error": "Tool execution blocked: <reason>"}`. Plain
  text on stdout with exit 0 is a system message; exit 2 refuses with the text.

Trust
  Folder trust is on: a non-interactive run in a folder not trusted (`~/.gemini/
  trustedFolders.json`, `{"<path>": "TRUST_FOLDER"}`) exits at once ("Gemini CLI is not
  running in a trusted directory"), unless `--skip-trust` or GEMINI_CLI_TRUST_WORKSPACE=true;
  a project's hooks load only in a trusted folder. New project hooks are announced on stderr
  (`WARNING: The following project-level hooks have been detected`) and run; `--yolo`
  approves the model's tool calls (only in a trusted folder).

Model API
  `POST {GOOGLE_GEMINI_BASE_URL}/v1beta/models/<model>:streamGenerateContent?alt=sse`, with
  the `gemini-api-key` sign-in (`security.auth.selectedType` in the user's settings, and
  GEMINI_API_KEY). Without `-m`, a classifier request chooses the model first. The shell
  tool refuses a command with a substitution (`$(...)`, `$((...))`, backticks) before it
  runs.

Transcript (transcript_path)
  `~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`: JSON lines; each model response
  a record `{"type": "gemini", "tokens": {"input", "output", "cached", ...}, "model"}`,
  written (again, with its `toolCalls`) before the call's AfterTool hook runs: `tokens.input`
  is the measure of the context.

MCP
  `mcpServers` in the same settings file: `{"<name>": {"command", "args", "env", "cwd",
  "timeout", "trust"}}`, started (only in a trusted folder) with Gemini's environment less
  every variable whose name holds TOKEN, SECRET, PASSWORD, KEY, AUTH, CREDENTIAL, PRIVATE or
  CERT (GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL too: the identity is the clone's git config);
  GITSTATE_AGENT passes. The model sees a server's tools as `mcp_<server>_<tool>`.
"""

GEMINI_VERSION = "0.61.0"   # the version the facts above were read from
