/**
 * The composition matrix: executor × capability (library front end) and executor × front end.
 * Each cell says what a user gets: it works, or it refuses with a stable error name that the docs
 * list with the alternative. The matrix tests (test/matrix/*.test.ts) run every cell against that
 * expectation, and docs/matrix.md is rendered from this file (test/matrix/doc.test.ts compares),
 * so the table in the docs is the table the tests hold.
 */

export const EXECUTORS = ["in-process", "subprocess", "subprocess-shared", "sandbox-quickjs", "sandbox-deno", "container", "remote", "python", "python-sandbox"] as const;
export type ExecutorId = (typeof EXECUTORS)[number];

export const CAPABILITIES = [
  "tools-cli",
  "tools-mcp",
  "tools-http",
  "tools-toolable",
  "tools-code",
  "toolable-session",
  "toolable-events",
  "toolable-sampling",
  "workflows",
  "workflows-other-language",
  "artifacts",
  "deps",
  "skills",
  "skills-run",
  "approvals",
  "cancel-idle",
  "timeout-idle",
  "timeout-busy",
  "memory-cap",
  "exec",
  "durable",
  "agents",
] as const;
export type CapabilityId = (typeof CAPABILITIES)[number];

export const FRONT_ENDS = ["library", "cli-run", "mcp-stdio", "mcp-http", "agents", "ai-sdk", "openai-agents", "langchain"] as const;
export type FrontEndId = (typeof FRONT_ENDS)[number];

export type Outcome =
  | { kind: "works"; note?: string }
  /** Refused at once with this error name (in the result, or thrown by the host API); `instead` names the alternative. */
  | { kind: "refuses"; error: string; instead: string }
  /** The same code path as another cell, which the tests run (said in the table, not run twice). */
  | { kind: "same-as"; cell: string };

const works = (note?: string): Outcome => ({ kind: "works", ...(note ? { note } : {}) });
const refuses = (error: string, instead: string): Outcome => ({ kind: "refuses", error, instead });

export const CAPABILITY_TITLES: Record<CapabilityId, string> = {
  "tools-cli": "CLI tool (`type: cli` YAML)",
  "tools-mcp": "MCP tool (`type: mcp`, stdio server)",
  "tools-http": "HTTP tool (`type: http`)",
  "tools-toolable": "toolable tool: call, ToolError code/recoverable/suggestion",
  "tools-code": "tool defined in code (defineTool, AI SDK tool; `tools` option / `--tools-module`)",
  "toolable-session": "toolable session (open, send, iterate, close)",
  "toolable-events": "toolable streaming events reach the host",
  "toolable-sampling": "toolable sampling answered by the host's sampler",
  workflows: "workflows: create and invoke (guest's language)",
  "workflows-other-language": "invoke a workflow saved in the other language",
  artifacts: "artifacts: save and load JSON",
  deps: "deps: list",
  skills: "skills: list, load, read",
  "skills-run": "skills: run a skill's script",
  approvals: "approval middleware refuses a call",
  "cancel-idle": "cancel while waiting on a tool keeps variables",
  "timeout-idle": "timeout while waiting on a tool keeps variables",
  "timeout-busy": "timeout of a busy loop: restarted, said so",
  "memory-cap": "memory cap: over it is MemoryLimitError",
  exec: "session.exec (a command where the code runs)",
  durable: "durable run: an approval pauses it, `session.resume` replays the ledger and goes on",
  agents: "agents.* from the code (served host-side by the agent runtime)",
};

/** What each executor does with each capability. A cell not listed works. */
const EXCEPTIONS: Partial<Record<ExecutorId, Partial<Record<CapabilityId, Outcome>>>> = {
  "in-process": {
    "memory-cap": refuses("ValidationError", "the in-process executor shares the host's heap; use subprocess, sandbox, python or container for a cap"),
    "timeout-busy": works("a synchronous loop is stopped by vm's timeout; the context is kept"),
    exec: refuses("ValidationError", "session.exec runs commands in a container: use --executor container"),
  },
  subprocess: {
    exec: refuses("ValidationError", "session.exec runs commands in a container: use --executor container"),
  },
  "subprocess-shared": {
    "timeout-busy": works("a synchronous loop is stopped by vm's timeout inside the shared child; the context is kept, the child's other sessions go on"),
    "memory-cap": works("the cap is the shared child's (SharedChildren maxMemoryMb, --memory-mb): going over it ends every session of that child"),
    exec: refuses("ValidationError", "session.exec runs commands in a container: use --executor container"),
  },
  "sandbox-quickjs": {
    "skills-run": refuses("ValidationError", "the sandbox runs no commands: use subprocess or container to run skill scripts"),
    exec: refuses("ValidationError", "session.exec runs commands in a container: use --executor container"),
  },
  "sandbox-deno": {
    "skills-run": refuses("ValidationError", "the sandbox runs no commands: use subprocess or container to run skill scripts"),
    exec: refuses("ValidationError", "session.exec runs commands in a container: use --executor container"),
  },
  container: {},
  remote: {
    exec: refuses("NotSupportedError", "the server's executor runs no commands: start the server with serve --executor container"),
    durable: refuses("DurableRunsUnsupportedError", "the calls are answered on the server: start it with serve --durable; its runs pause there and POST /runs/{id}/decisions resumes them on any server of the storage (test/runs/serve.test.ts)"),
    agents: refuses("ValidationError", "agents.* is answered where the agent runtime runs, and a serve server cannot call back to it: give agents that call agents a local executor (an agent file with agents: [...] under code_mode executor \"remote\" is refused when the project loads, and by agent check)"),
    "toolable-events": works("they reach the server's log (serve prints each event), not the remote client"),
    "memory-cap": refuses("ValidationError", "the server's executor sets the cap: serve --memory-mb N"),
  },
  python: {
    exec: refuses("ValidationError", "session.exec runs commands in a container: use --executor container"),
    durable: refuses("DurableRunsUnsupportedError", "durable runs replay the guest's clock and random numbers in TypeScript guests only: run durable sessions in TypeScript"),
  },
  "python-sandbox": {
    durable: refuses("DurableRunsUnsupportedError", "durable runs replay the guest's clock and random numbers in TypeScript guests only: run durable sessions in TypeScript"),
    "skills-run": refuses("ValidationError", "the sandbox runs no commands: use the python (CPython) executor or a container to run skill scripts"),
    exec: refuses("ValidationError", "session.exec runs commands in a container: use --executor container"),
  },
};

export function expected(executor: ExecutorId, capability: CapabilityId): Outcome {
  if (capability === "workflows-other-language") {
    return refuses("ValidationError", "a session runs workflows of its own language; open a session of the other language (mcp --languages typescript,python) to call it");
  }
  return EXCEPTIONS[executor]?.[capability] ?? works();
}

/**
 * Front ends: each runs one composite probe (a CLI tool, a workflow and an artifact in one run) on
 * each executor. The capabilities behind a front end are the Session's, so they are covered once,
 * in the library column above. The three framework adapters take a Session (any executor) and
 * share the run_code of src/adapters/core.ts: their own tests run them on a subprocess Session.
 */
const ADAPTER_TESTS: Partial<Record<FrontEndId, string>> = { "ai-sdk": "test/adapters/ai.test.ts", "openai-agents": "test/adapters/openai-agents.test.ts", langchain: "test/adapters/langchain.test.ts" };

/**
 * `mcp --http` builds each client's session with the same executor factory as `mcp` over stdio
 * (src/cli/commands/mcp.ts, newExecutor); what HTTP adds is the transport and, for executors that
 * can prestart, the --spare-executors pool. An executor that cannot prestart gets a new executor
 * per client, as stdio does: its mcp-http cell is its mcp-stdio cell plus the transport, which the
 * other mcp-http cells run (remote: no spares either; subprocess, python, the deno engine: spares).
 */
const HTTP_AS_STDIO: ReadonlySet<ExecutorId> = new Set<ExecutorId>(["in-process", "sandbox-quickjs", "container"]);
const HTTP_AS_STDIO_NOTE =
  "this executor's mcp-stdio cell: `mcp --http` builds each client's session with the same executor factory, and this executor cannot prestart, so no --spare-executors pool is involved; the HTTP transport is run by the other mcp-http cells (remote without spares; subprocess, subprocess-shared, sandbox-deno, python, python-sandbox with them)";

/**
 * The converse, so that each executor is run through `mcp` once: where the mcp-http cell runs (the
 * executor prestarts, or is remote), the mcp-stdio cell is that cell minus the HTTP transport. Both
 * build the session's executor with the same `newExecutor` (src/cli/commands/mcp.ts) and serve it
 * with the same run_code; what stdio adds (one session, started once the handshake is done) does not
 * depend on the executor, and the mcp-stdio cells of in-process, sandbox-quickjs and container run it.
 */
const STDIO_AS_HTTP_NOTE =
  "this executor's mcp-http cell: `mcp` over stdio builds its one session with the same executor factory (newExecutor in src/cli/commands/mcp.ts) and the same run_code; the stdio transport and its start after the handshake do not depend on the executor and are run by the mcp-stdio cells of in-process, sandbox-quickjs and container";

/**
 * `run` and `mcp` take the executor flags from one place (addExecutorOptions, checkExecutorFlags in
 * src/cli/shared.ts) and build the executor with the same createExecutor(name, executorOptionsOf +
 * sharedChildOf); what `run` adds — one session, the code from the command line, the value printed
 * — does not depend on the executor. So `run` is run on the default executor (its own cell) and on
 * remote, whose `run --remote` builds its RemoteExecutor itself; every other executor's cli-run
 * cell is its `mcp` cell (flags → executor) plus the subprocess cli-run cell (the front end).
 */
const CLI_RUN_OWN: ReadonlySet<ExecutorId> = new Set<ExecutorId>(["subprocess", "remote"]);
const CLI_RUN_NOTE =
  "this executor's mcp cell plus subprocess × cli-run: `run` and `mcp` read the same executor flags (addExecutorOptions, checkExecutorFlags) and build the executor with the same createExecutor (src/cli/shared.ts); what `run` itself does (one session, the code from argv, the value printed) does not depend on the executor";

export function expectedFrontEnd(executor: ExecutorId, frontEnd: FrontEndId): Outcome {
  const adapterTest = ADAPTER_TESTS[frontEnd];
  if (adapterTest) return { kind: "same-as", cell: `the library's: the adapter takes a Session of any executor and calls its run_code (${adapterTest} runs it end to end)` };
  if (frontEnd === "library") return { kind: "same-as", cell: "the capability table above" };
  if (frontEnd === "mcp-http" && HTTP_AS_STDIO.has(executor)) return { kind: "same-as", cell: HTTP_AS_STDIO_NOTE };
  if (frontEnd === "mcp-stdio" && !HTTP_AS_STDIO.has(executor)) return { kind: "same-as", cell: STDIO_AS_HTTP_NOTE };
  if (frontEnd === "cli-run" && !CLI_RUN_OWN.has(executor)) return { kind: "same-as", cell: CLI_RUN_NOTE };
  if (executor === "remote" && frontEnd === "agents") return works('code_mode.executor "remote" with remote.url / token_env');
  return works();
}

export function outcomeText(o: Outcome): string {
  switch (o.kind) {
    case "works":
      return o.note ? `works (${o.note})` : "works";
    case "refuses":
      return `refuses: \`${o.error}\` — ${o.instead}`;
    case "same-as":
      return `same path as ${o.cell}`;
  }
}

/** docs/matrix.md, rendered from the tables above. */
export function renderMatrixDoc(): string {
  const lines: string[] = [
    "# The composition matrix",
    "",
    "<!-- Generated from test/matrix/cells.ts by test/matrix/doc.test.ts (UPDATE_MATRIX=1 rewrites it); do not edit by hand. -->",
    "",
    "Every executor with every capability and every front end. Each cell is run by the tests in",
    "`test/matrix/` against what this page says: it works, or it refuses at once with the error",
    "named here (never a silent failure). Executors: `in-process`, `subprocess` (default),",
    "`subprocess-shared` (sessions sharing node children: `sharedChild`, `--sessions-per-child N`),",
    "`sandbox-quickjs` (`--executor sandbox`), `sandbox-deno` (`--engine deno`), `container`,",
    "`remote` (`serve` + `RemoteExecutor` / `--remote`), `python` (`--language python`, CPython),",
    "`python-sandbox` (`--language python --executor sandbox`, Pyodide in deno).",
    "",
    "## Capabilities (library front end)",
    "",
  ];
  // One grid, short cells; what each refusal or note says follows under it, numbered.
  const notes: string[] = [];
  const cell = (o: Outcome): string => {
    if (o.kind === "works" && !o.note) return "works";
    const text = outcomeText(o);
    let n = notes.indexOf(text);
    if (n < 0) n = notes.push(text) - 1;
    return `${o.kind === "refuses" ? `refuses \`${o.error}\`` : o.kind === "works" ? "works" : "same path"} [${n + 1}]`;
  };
  lines.push(`| capability | ${EXECUTORS.join(" | ")} |`, `|---|${EXECUTORS.map(() => "---").join("|")}|`);
  for (const c of CAPABILITIES) lines.push(`| ${CAPABILITY_TITLES[c]} | ${EXECUTORS.map((e) => cell(expected(e, c))).join(" | ")} |`);
  lines.push("");
  notes.forEach((text, i) => lines.push(`${i + 1}. ${text}`));
  lines.push("");
  const capabilityNotes = notes.length;
  lines.push(
    "## Front ends",
    "",
    "Each front end runs one composite probe (a CLI tool call, a workflow, an artifact) on each",
    "executor (a \"same path\" cell names the cell that runs its code path); what lies behind it is",
    "the Session, covered capability by capability above.",
    "",
    `| executor | ${FRONT_ENDS.join(" | ")} |`,
    `|---|${FRONT_ENDS.map(() => "---").join("|")}|`,
  );
  for (const executor of EXECUTORS) {
    lines.push(`| ${executor} | ${FRONT_ENDS.map((f) => cell(expectedFrontEnd(executor, f))).join(" | ")} |`);
  }
  lines.push("");
  notes.slice(capabilityNotes).forEach((text, i) => lines.push(`${capabilityNotes + i + 1}. ${text}`));
  lines.push("");
  return lines.join("\n");
}
