/**
 * Runs the cells of test/matrix/cells.ts for one executor: one shared session (a second one with
 * a memory cap where the executor has one), real tools of every kind in one folder (the example CLI
 * tools, a `sleep` tool, the toolable Python fixture, the MCP fixture server over stdio, an HTTP
 * tool against a server on 127.0.0.1), and each capability's probe in the guest's language. A
 * probe must show the capability really worked (its value checked), or the refusal named in the
 * cell; anything else fails the cell.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentsHost } from "../../src/execution/host.js";
import type { Executor } from "../../src/execution/protocol.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { approval } from "../../src/tools/middleware/builtins.js";
import type { ToolMiddleware } from "../../src/tools/middleware/types.js";
import type { ToolableEvent, ToolableHostOptions } from "../../src/tools/adapters/toolable/host.js";
import { EXAMPLE_SKILLS_PATH, EXAMPLE_TOOLS_PATH } from "../conformance/executor.js";
import { FIXTURE_SERVER } from "../tools/mcp/helpers.js";
import { PYTOOL } from "../tools/toolable/fixture.js";
import { CAPABILITIES, expected, type CapabilityId, type ExecutorId, type Outcome } from "./cells.js";

export type Language = "typescript" | "python";

export interface MatrixFixtures {
  dir: string;
  toolsPath: string;
  skillsPath: string;
  /** Answers every HTTP tool call with { hello: <name> }. */
  httpUrl: string;
}

/** What an executor factory gets: the fixtures and the per-session host options. */
export interface ExecutorOptions {
  toolsPath: string;
  skillRoots: string[];
  defaultTimeoutMs: number;
  middleware: ToolMiddleware[];
  toolable: ToolableHostOptions;
  /** Set for the memory-cap session only. */
  memoryMb?: number;
  /** What agents.* reaches: a stand-in for the agent runtime, answering { agent, input }. */
  agents: AgentsHost;
}

export interface MatrixExecutor {
  id: ExecutorId;
  language: Language;
  make(options: ExecutorOptions): Executor | Promise<Executor>;
  /** Started before the sessions (a server, an image); stopped after. */
  setup?(fixtures: MatrixFixtures): Promise<void>;
  teardown?(): Promise<void>;
  /** Where toolable events and sampling requests land when not on this host (remote: the server's). */
  sawProgressEvent?(): boolean;
  samplesAnswered?(): number;
}

const SLEEP_YAML = `name: sleep
description: Wait a number of seconds
command: sleep
timeout: 120
schema:
  positional:
    - { name: seconds, type: string, required: true, description: Seconds to wait }
`;

let fixtures: MatrixFixtures | null = null;
let httpServer: Server | null = null;

/** The tools folder and the HTTP server every cell of a file uses. */
export async function matrixFixtures(): Promise<MatrixFixtures> {
  if (fixtures) return fixtures;
  const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-matrix-"));
  const toolsPath = path.join(dir, "tools");
  await cp(EXAMPLE_TOOLS_PATH, toolsPath, { recursive: true });
  httpServer = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ hello: url.searchParams.get("name") ?? "" }));
  });
  await new Promise<void>((resolve) => httpServer!.listen(0, "127.0.0.1", resolve));
  const httpUrl = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
  await writeFile(path.join(toolsPath, "sleep.yaml"), SLEEP_YAML);
  await writeFile(path.join(toolsPath, "py.yaml"), `type: toolable\nname: py\ncommand: ${JSON.stringify(PYTOOL)}\n# A loaded 2-core machine can take seconds to start python3 for --discover.\ndiscover_timeout: 60\n`);
  await writeFile(path.join(toolsPath, "math.yaml"), `name: math\ntype: mcp\ndescription: Fixture math server\ntransport: stdio\ncommand: ${JSON.stringify(process.execPath)}\nargs: [${JSON.stringify(FIXTURE_SERVER)}]\n`);
  await writeFile(
    path.join(toolsPath, "web.yaml"),
    `name: web\ntype: http\ndescription: Greeting service\nbase_url: ${httpUrl}\nendpoints:\n  hello:\n    method: GET\n    path: /hello\n    description: Greet\n    params:\n      name: { type: string, required: true, description: Who }\n`,
  );
  const skillsPath = path.join(dir, "skills");
  await cp(EXAMPLE_SKILLS_PATH, skillsPath, { recursive: true });
  await mkdir(path.join(dir, "store"), { recursive: true });
  fixtures = { dir, toolsPath, skillsPath, httpUrl };
  return fixtures;
}

async function closeFixtures(): Promise<void> {
  if (httpServer) await new Promise<void>((resolve) => httpServer!.close(() => resolve()));
  if (fixtures) await rm(fixtures.dir, { recursive: true, force: true, maxRetries: 5 });
  httpServer = null;
  fixtures = null;
}

/** What a probe saw. */
export type Seen = { kind: "works"; value: unknown } | { kind: "refused"; error: string; message: string };

export interface CellContext {
  session: Session;
  language: Language;
  /** Events and sampling requests the host received during the probe. */
  /** Resets, then reads, what the executor's host saw of toolable events and sampling requests. */
  resetSeen(): void;
  sawProgressEvent(): boolean;
  samplesAnswered(): number;
  /** A session with a memory cap of MEMORY_CAP_MB, made on first use. */
  cappedSession(): Promise<Session>;
  /** A durable session whose approver leaves calls with text ["wait"] pending; refusals to make one are thrown. */
  durableSession(): Promise<Session>;
  run(code: string, options?: { timeoutMs?: number; signal?: AbortSignal; session?: Session }): Promise<Seen>;
}

export const MEMORY_CAP_MB = 256;
const TIMEOUT_MS = 60_000;

/** Each capability: the probe, and the check of what it gave when the cell says it works. */
const PROBES: Record<CapabilityId, (c: CellContext) => Promise<Seen>> = {
  "tools-cli": async (c) => checked(await c.run(pick(c, "await tools.echo.say({ text: ['matrix'] })", "tools.echo.say(text=['matrix'])")), (v) => expect(String(v).trim()).toBe("matrix")),
  "tools-mcp": async (c) => checked(await c.run(pick(c, "await tools.math.add({ a: 2, b: 3 })", "tools.math.add(a=2, b=3)")), (v) => expect(JSON.stringify(v)).toContain("5")),
  "tools-code": async (c) =>
    checked(await c.run(pick(c, "[await tools.weather({ city: 'Oslo' }), await tools.add({ a: 2, b: 3 })]", "[tools.weather(city='Oslo'), tools.add(a=2, b=3)]")), (v) => expect(v).toEqual([{ city: "Oslo", tempC: 4 }, 5])),
  "tools-http": async (c) => checked(await c.run(pick(c, "await tools.web.hello({ name: 'matrix' })", "tools.web.hello(name='matrix')")), (v) => expect(v).toEqual({ hello: "matrix" })),
  "tools-toolable": async (c) =>
    checked(
      await c.run(
        pick(
          c,
          "let out; try { await tools.py.fail({ code: 'NOT_FOUND', suggestion: 'list first' }) } catch (e) { out = [e.name, e.code, e.recoverable, e.suggestion] } out.push(await tools.py.count({ to: 2 })); out",
          "out = None\ntry:\n    tools.py.fail(code='NOT_FOUND', suggestion='list first')\nexcept ToolError as e:\n    out = [type(e).__name__, e.code, e.recoverable, e.suggestion]\nout.append(tools.py.count(to=2))\nout",
        ),
      ),
      (v) => {
        const out = v as unknown[];
        expect(out.slice(0, 4)).toEqual(["ToolError", "NOT_FOUND", true, "list first"]);
        expect(out[4]).toBeDefined();
      },
    ),
  "toolable-session": async (c) =>
    checked(
      await c.run(
        pick(
          c,
          "const s = await tools.py.repl.session({ greeting: 'hello' }); const first = await s.next(); await s.send({ action: 'quit' }); const rest = []; for await (const ev of s) rest.push(ev.type); await s.close(); [first !== null, rest.length >= 0]",
          "with tools.py.repl.session(greeting='hello') as s:\n    first = s.next()\n    s.send({'action': 'quit'})\n    rest = [ev['type'] for ev in s]\n[first is not None, len(rest) >= 0]",
        ),
      ),
      (v) => expect(v).toEqual([true, true]),
    ),
  "toolable-events": async (c) => {
    c.resetSeen();
    return checked(await c.run(pick(c, "await tools.py.count({ to: 2 })", "tools.py.count(to=2)")), () => expect(c.sawProgressEvent()).toBe(true));
  },
  "toolable-sampling": async (c) => {
    c.resetSeen();
    const before = c.samplesAnswered();
    return checked(await c.run(pick(c, "await tools.py.ask({ question: '2+2?' })", "tools.py.ask(question='2+2?')")), (v) => {
      expect(JSON.stringify(v)).toContain("four (");
      expect(c.samplesAnswered()).toBe(before + 1);
    });
  },
  workflows: async (c) =>
    checked(
      await c.run(
        pick(
          c,
          "await workflows.create({ name: 'mx_triple', source: 'export async function run({ n }: { n: number }) { return n * 3; }', description: 'Triple' }); await workflows.mx_triple({ n: 14 })",
          "workflows.create(name='mx_triple_py', source='def run(n: int) -> int:\\n    return n * 3\\n', description='Triple', language='python')\nworkflows.mx_triple_py(n=14)",
        ),
      ),
      (v) => expect(v).toBe(42),
    ),
  "workflows-other-language": async (c) => {
    // The other language's workflow, saved through the host API.
    const name = c.language === "python" ? "mx_ts_only" : "mx_py_only";
    const source = c.language === "python" ? "export async function run() { return 1; }" : "def run():\n    return 1\n";
    await c.session.dispatch("workflows", "create", [{ name, source, description: "Other language", language: c.language === "python" ? "typescript" : "python" }]).catch((err: unknown) => { if (!/exists/.test(String(err))) throw err; });
    return c.run(pick(c, `await workflows.invoke('${name}', {})`, `workflows.invoke('${name}')`));
  },
  artifacts: async (c) => checked(await c.run(pick(c, "await artifacts.save('mx.json', { a: [1, 'x'] }); await artifacts.load('mx.json')", "artifacts.save('mx.json', {'a': [1, 'x']})\nartifacts.load('mx.json')")), (v) => expect(v).toEqual({ a: [1, "x"] })),
  deps: async (c) => checked(await c.run(pick(c, "Array.isArray(await deps.list())", "isinstance(deps.list(), list)")), (v) => expect(v).toBe(true)),
  skills: async (c) =>
    checked(
      await c.run(
        pick(
          c,
          "const names = (await skills.list()).map((s) => s.name).sort(); const body = (await skills.load('csv-summary')).body.length > 0; const file = (await skills.read('csv-summary', 'references/columns.md')).slice(0, 1); [names.includes('csv-summary'), body, file]",
          "names = sorted(s['name'] for s in skills.list())\nbody = len(skills.load('csv-summary')['body']) > 0\nf = skills.read('csv-summary', 'references/columns.md')[:1]\n[('csv-summary' in names), body, f]",
        ),
      ),
      (v) => expect(v).toEqual([true, true, "#"]),
    ),
  "skills-run": async (c) =>
    checked(
      await c.run(
        pick(
          c,
          "await skills.create({ name: 'mx-echo', description: 'Echo argv. Use in the matrix.', body: 'x', files: { 'scripts/echo.sh': 'echo ran:$1' } }); String(await skills.run('mx-echo', 'scripts/echo.sh', ['ok'])).trim()",
          "skills.create(name='mx-echo', description='Echo argv. Use in the matrix.', body='x', files={'scripts/echo.sh': 'echo ran:$1'})\nstr(skills.run('mx-echo', 'scripts/echo.sh', ['ok'])).strip()",
        ),
      ),
      (v) => expect(String(v)).toContain("ran:ok"),
    ),
  approvals: async (c) => {
    const seen = await c.run(pick(c, "await tools.uname.kernel({})", "tools.uname.kernel()"));
    // The approver refuses uname.*: a PERMISSION ToolError is the refusal the cell expects as "works".
    if (seen.kind === "refused" && /not approved|denied/.test(seen.message)) return { kind: "works", value: seen.message };
    return seen.kind === "works" ? { kind: "refused", error: "NotRefused", message: `the call ran: ${JSON.stringify(seen.value)}` } : seen;
  },
  "cancel-idle": async (c) => {
    await c.run(pick(c, "var mxKept = 'kept';", "mx_kept = 'kept'"));
    const abort = new AbortController();
    const pending = c.run(pick(c, "await tools.sleep({ seconds: '30' })", "tools.sleep(seconds='30')"), { signal: abort.signal });
    // Cancel once the tool call has started (the call is in flight on the host).
    await waitUntilCalling(c);
    abort.abort();
    const seen = await pending;
    if (seen.kind !== "refused" || seen.error !== "CancelledError") return { kind: "refused", error: "NotCancelled", message: JSON.stringify(seen) };
    return checked(await c.run(pick(c, "typeof mxKept === 'undefined' ? 'lost' : mxKept", "globals().get('mx_kept', 'lost')")), (v) => expect(v).toBe("kept"));
  },
  "timeout-idle": async (c) => {
    await c.run(pick(c, "var mxKept2 = 'kept';", "mx_kept2 = 'kept'"));
    const seen = await c.run(pick(c, "await tools.sleep({ seconds: '30' })", "tools.sleep(seconds='30')"), { timeoutMs: 1_500 });
    if (seen.kind !== "refused" || seen.error !== "TimeoutError") return { kind: "refused", error: "NoTimeout", message: JSON.stringify(seen) };
    return checked(await c.run(pick(c, "typeof mxKept2 === 'undefined' ? 'lost' : mxKept2", "globals().get('mx_kept2', 'lost')")), (v) => expect(v).toBe("kept"));
  },
  "timeout-busy": async (c) => {
    const seen = await c.run(pick(c, "for (;;) {}", "while True:\n    pass"), { timeoutMs: 1_000 });
    if (seen.kind !== "refused" || seen.error !== "TimeoutError") return { kind: "refused", error: "NoTimeout", message: JSON.stringify(seen) };
    return checked(await c.run("1 + 1"), (v) => expect(v).toBe(2));
  },
  "memory-cap": async (c) => {
    let capped: Session;
    try {
      capped = await c.cappedSession();
    } catch (err) {
      return { kind: "refused", error: (err as Error).name, message: (err as Error).message };
    }
    const seen = await c.run(pick(c, "const keep = []; for (;;) keep.push(new Array(1e6).fill(Math.random()));", `bytearray(${MEMORY_CAP_MB * 4} * 1024 * 1024)`), { session: capped, timeoutMs: 60_000 });
    if (seen.kind !== "refused" || seen.error !== "MemoryLimitError") return { kind: "refused", error: "NoMemoryLimit", message: JSON.stringify(seen).slice(0, 500) };
    return checked(await c.run("1 + 1", { session: capped }), (v) => expect(v).toBe(2));
  },
  durable: async (c) => {
    let durable: Session;
    try {
      durable = await c.durableSession();
    } catch (err) {
      return { kind: "refused", error: (err as Error).name, message: (err as Error).message };
    }
    const code = pick(c, "const a = String(await tools.echo.say({ text: ['go'] })).trim(); const b = String(await tools.echo.say({ text: ['wait'] })).trim(); [a, b, typeof Math.random()]", "[str(tools.echo.say(text=['go'])).strip(), str(tools.echo.say(text=['wait'])).strip()]");
    const paused = await durable.run(code, { timeoutMs: TIMEOUT_MS });
    if (paused.status !== "paused") return paused.ok ? { kind: "refused", error: "NotPaused", message: JSON.stringify(paused.value) } : { kind: "refused", error: paused.error?.name ?? "?", message: paused.error?.message ?? "" };
    expect(paused.pending).toEqual([expect.objectContaining({ id: "call-1", tool: "echo", callable: "say", args: { text: ["wait"] } })]);
    const done = await durable.resume(paused.continuation!, [{ id: "call-1", decision: "edit", args: { text: ["edited"] } }], { timeoutMs: TIMEOUT_MS });
    return checked(done.ok ? { kind: "works", value: done.value } : { kind: "refused", error: done.error?.name ?? "?", message: done.error?.message ?? "" }, (v) => expect(v).toEqual(["go", "edited", "number"]));
  },
  agents: async (c) =>
    checked(await c.run(pick(c, "await agents.echoer({ input: { n: 1 } })", "agents.echoer(input={'n': 1})")), (v) => expect(v).toEqual({ agent: "echoer", input: { n: 1 } })),
  exec: async (c) => {
    try {
      const out = await c.session.exec(["echo", "exec-ok"]);
      return checked({ kind: "works", value: out.output }, (v) => expect(String(v)).toContain("exec-ok"));
    } catch (err) {
      return { kind: "refused", error: (err as Error).name, message: (err as Error).message };
    }
  },
};

function pick(c: CellContext, ts: string, py: string): string {
  return c.language === "python" ? py : ts;
}

/** A probe that ran: its value must pass `check`, or the cell failed silently. */
function checked(seen: Seen, check: (value: unknown) => void): Seen {
  if (seen.kind === "works") check(seen.value);
  return seen;
}

/** Until a `sleep` tool call is running (the sleep process exists): the run is then waiting, not busy. */
async function waitUntilCalling(c: CellContext): Promise<void> {
  void c;
  const { processesWith } = await import("../helpers/processes.js");
  const { waitFor } = await import("../helpers/processes.js");
  await waitFor(() => processesWith("sleep 30").length > 0, "the sleep tool call to start", 30_000, 20);
}

function expectOutcome(seen: Seen, outcome: Outcome): void {
  if (outcome.kind === "same-as") return;
  if (outcome.kind === "works") {
    expect(seen, `expected the capability to work; it gave ${JSON.stringify(seen).slice(0, 600)}`).toMatchObject({ kind: "works" });
  } else {
    expect(seen, `expected a ${outcome.error} refusal; it gave ${JSON.stringify(seen).slice(0, 600)}`).toMatchObject({ kind: "refused", error: outcome.error });
  }
}

/** The capability cells of one executor, with one shared session. */
export function capabilityMatrix(executor: MatrixExecutor): void {
  describe(`matrix: ${executor.id} × capabilities (library)`, () => {
    let fx: MatrixFixtures;
    let session: Session;
    let capped: Session | null = null;
    let durable: Session | null = null;
    const events: ToolableEvent[] = [];
    const samples: string[] = [];
    const sessions: Session[] = [];
    const options = (memoryMb?: number): ExecutorOptions => ({
      toolsPath: fx.toolsPath,
      skillRoots: [fx.skillsPath],
      defaultTimeoutMs: TIMEOUT_MS,
      middleware: [approval((call) => call.tool !== "uname", { only: ["uname.*"] })],
      toolable: { onEvent: (e) => events.push(e), sampler: async (req) => (samples.push(req.prompt), `four (${req.prompt})`) },
      ...(memoryMb !== undefined ? { memoryMb } : {}),
      agents: { list: () => [{ name: "echoer", description: "Answers with what it was given" }], call: async (name, args) => ({ agent: name, input: (args as { input?: unknown } | undefined)?.input ?? null }) },
    });
    const open = async (memoryMb?: number): Promise<Session> => {
      const s = new Session({ storage: new FileStorage({ basePath: path.join(fx.dir, "store", `${executor.id}${memoryMb ? "-capped" : ""}`) }), executor: await executor.make(options(memoryMb)) });
      sessions.push(s);
      await s.start();
      return s;
    };
    const openDurable = async (): Promise<Session> => {
      // The approver leaves echo.say({ text: ["wait"] }) for a human; everything else runs.
      const pending = approval((call) => ((call.args as { text?: unknown[] }).text?.[0] === "wait" ? "pending" : true), { only: ["echo.*"] });
      const o = options();
      const s = new Session({
        storage: new FileStorage({ basePath: path.join(fx.dir, "store", `${executor.id}-durable`) }),
        executor: await executor.make({ ...o, middleware: [...o.middleware, pending] }),
        durable: { secret: "matrix-secret-0123456789abcdef0123456789" },
      });
      sessions.push(s);
      await s.start();
      const probe = await s.run("1");
      if (probe.status === undefined) throw Object.assign(new Error(probe.error?.message ?? "not durable"), { name: probe.error?.name ?? "NotDurable" });
      return s;
    };

    beforeAll(async () => {
      fx = await matrixFixtures();
      await executor.setup?.(fx);
      session = await open();
    }, 180_000);
    afterAll(async () => {
      for (const s of sessions) await s.close();
      await executor.teardown?.();
      await closeFixtures();
    }, 60_000);

    const context = (): CellContext => ({
      session,
      language: executor.language,
      resetSeen: () => {
        events.length = 0;
      },
      sawProgressEvent: () => executor.sawProgressEvent?.() ?? events.some((e) => e.event.type === "progress"),
      samplesAnswered: () => executor.samplesAnswered?.() ?? samples.length,
      cappedSession: async () => (capped ??= await open(MEMORY_CAP_MB)),
      durableSession: async () => (durable ??= await openDurable()),
      run: async (code, o = {}) => {
        const r = await (o.session ?? session).run(code, { timeoutMs: o.timeoutMs ?? TIMEOUT_MS, ...(o.signal ? { signal: o.signal } : {}) });
        return r.ok ? { kind: "works", value: r.value } : { kind: "refused", error: r.error?.name ?? "?", message: r.error?.message ?? "" };
      },
    });

    for (const capability of CAPABILITIES) {
      const outcome = expected(executor.id, capability);
      it(`${capability}: ${outcome.kind === "refuses" ? `refuses with ${outcome.error}` : outcome.kind}`, async () => {
        expectOutcome(await PROBES[capability](context()), outcome);
      }, 180_000);
    }
  });
}
