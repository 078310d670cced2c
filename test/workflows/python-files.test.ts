/**
 * Python workflows as `.py` files on FileStorage, and Python workflows saved from outside a Python
 * session: one commit point per save, the old `.ts` layout read and migrated in a crash-safe order,
 * one file per name (`.py` > `.ts` > `.js`), and params/description read by a real python3 with
 * `ast` (workflow_signature.py) for a TypeScript session's create and for hand edits, cached by the
 * catalogue so listing never runs python3 again for an unchanged file.
 */
import { spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { pythonGuestFile } from "../../src/execution/python/guest-files.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import type { WorkflowRecord } from "../../src/storage/protocol.js";
import { WorkflowLibrary } from "../../src/workflows/library.js";
import { pythonWorkflowSignature } from "../../src/workflows/python-signature.js";
import { ensureBuilt, MAIN } from "../cli/harness.js";
import { processesWith, waitFor } from "../helpers/processes.js";

const TRIPLE = ["def run(n: int, *, label: str = 'x') -> dict:", '    """Triple a number."""', "    return {'value': n * 3, 'label': label}", ""].join("\n");
const T0 = "2026-01-01T00:00:00.000Z";
const record = (name: string, source: string, extra: Partial<WorkflowRecord> = {}): WorkflowRecord => ({
  name,
  source,
  description: "Triple a number.",
  params: [{ name: "n", type: "int", required: true }],
  createdAt: T0,
  updatedAt: T0,
  language: "python",
  ...extra,
});

let dir: string;
let wf: string;
const stores: FileStorage[] = [];
const sessions: Session[] = [];

function storage(): FileStorage {
  const s = new FileStorage({ basePath: dir });
  stores.push(s);
  return s;
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-pyfiles-"));
  wf = path.join(dir, "workflows");
});

afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

describe("Python workflows as .py files", () => {
  it("are saved as <name>.py: line 1 the header as a Python comment, then the source exactly as saved", async () => {
    const s = storage();
    await s.workflows.save(record("triple", TRIPLE));
    expect((await readdir(wf)).filter((f) => !f.startsWith("."))).toEqual(["triple.py"]);
    const text = await readFile(path.join(wf, "triple.py"), "utf8");
    expect(text.split("\n")[0]).toMatch(/^# ts-code-mode workflow \{.*"language":"python"/);
    expect(text.slice(text.indexOf("\n") + 1)).toBe(TRIPLE);
    expect(await s.workflows.get("triple")).toMatchObject({ language: "python", source: TRIPLE, description: "Triple a number.", params: [{ name: "n" }] });
    // A TypeScript save stays .ts, and a hand-written .py (no header) is Python.
    await s.workflows.save(record("ts", "export function run() { return 1; }", { language: undefined } as Partial<WorkflowRecord>));
    await writeFile(path.join(wf, "hand.py"), "def run():\n    return 1\n");
    const listed = Object.fromEntries((await s.workflows.list()).map((r) => [r.name, r.language ?? "typescript"]));
    expect(listed).toEqual({ hand: "python", triple: "python", ts: "typescript" });
    expect(await readdir(wf)).toContain("ts.ts");
  });

  it("an old store's Python workflow in <name>.ts still reads, and its next save writes <name>.py and removes the .ts", async () => {
    await mkdir(wf, { recursive: true });
    const header = { sourceHash: await sha(TRIPLE), description: "Triple a number.", params: [{ name: "n", type: "int", required: true }], createdAt: T0, updatedAt: T0, language: "python" };
    await writeFile(path.join(wf, "triple.ts"), `// ts-code-mode workflow ${JSON.stringify(header)}\n${TRIPLE}`);
    const s = storage();
    expect(await s.workflows.get("triple")).toMatchObject({ language: "python", source: TRIPLE, params: [{ name: "n" }] });
    const got = (await s.workflows.get("triple"))!;
    await s.workflows.save({ ...got, updatedAt: "2026-02-01T00:00:00.000Z" });
    expect((await readdir(wf)).filter((f) => !f.startsWith("."))).toEqual(["triple.py"]);
    expect(await s.workflows.get("triple")).toMatchObject({ language: "python", source: TRIPLE, createdAt: T0, updatedAt: "2026-02-01T00:00:00.000Z" });
  });

  it("one name, one file: .py wins over .ts (the state a crash between the rename and the unlink leaves), the loser is reported and removed by the next save or delete", async () => {
    const s = storage();
    // A migration stopped after the .py was renamed into place: the new save is what reads.
    await s.workflows.save(record("triple", TRIPLE));
    await writeFile(path.join(wf, "triple.ts"), "export function run() { return 'old'; }\n");
    expect(await s.workflows.get("triple")).toMatchObject({ language: "python", source: TRIPLE });
    expect((await s.workflows.list()).map((r) => r.name)).toEqual(["triple"]);
    expect(await s.workflows.problems()).toEqual([{ file: "triple.ts", problem: expect.stringMatching(/ignored: triple\.py defines the same workflow and takes precedence/) }]);
    // A TypeScript save over it: .ts renamed into place, then the .py removed (the commit point).
    await s.workflows.save(record("triple", "export function run() { return 'new'; }\n", { language: undefined } as Partial<WorkflowRecord>));
    expect((await readdir(wf)).filter((f) => !f.startsWith("."))).toEqual(["triple.ts"]);
    expect(await s.workflows.get("triple")).not.toHaveProperty("language");
    // Both again (hand-made); a delete removes every file of the name.
    await writeFile(path.join(wf, "triple.py"), TRIPLE);
    await writeFile(path.join(wf, "triple.js"), "export function run() {}\n");
    expect(await s.workflows.delete("triple")).toBe(true);
    expect((await readdir(wf)).filter((f) => !f.startsWith("."))).toEqual([]);
    expect(await s.workflows.get("triple")).toBeNull();
  });
});

describe("Python workflows saved outside a Python session", () => {
  beforeAll(async () => {
    await ensureBuilt();
  });

  async function tsSession(): Promise<Session> {
    const session = new Session({ storage: storage(), executor: new InProcessExecutor({ defaultTimeoutMs: 20_000 }) });
    sessions.push(session);
    await session.start();
    return session;
  }

  it("a TypeScript session's workflows.create({ language: 'python' }) is checked and gets params and description from python3's ast, as from a Python guest", async () => {
    const ts = await tsSession();
    const created = await ts.run(`await workflows.create({ name: "triple", source: ${JSON.stringify(TRIPLE)}, language: "python" })`);
    expect(created.error ?? undefined).toBeUndefined();
    expect(created.value).toMatchObject({
      name: "triple",
      language: "python",
      description: "Triple a number.",
      params: [
        { name: "n", type: "int", required: true },
        { name: "label", type: "str", required: false, default: "x" },
      ],
    });
    const bad = await ts.run(`await workflows.create({ name: "bad", source: "def run(:\\n", language: "python" })`);
    expect(bad.error?.message).toMatch(/Syntax error in workflow "bad" at line 1/);
    const norun = await ts.run(`await workflows.create({ name: "norun", source: "def main():\\n    return 1\\n", language: "python" })`);
    expect(norun.error?.message).toMatch(/Python workflow "norun" must define a function named run/);
    expect((await ts.listWorkflows()).map((w) => w.name)).toEqual(["triple"]);
  });

  it("without python3, creating one fails with a clear error", async () => {
    const library = new WorkflowLibrary(storage().workflows, { python: path.join(dir, "no-such-python3") });
    // A source no earlier test read (signatures are cached by content).
    await expect(library.create({ name: "triple", source: `${TRIPLE}# ${dir}\n`, language: "python" })).rejects.toThrow(/checked \(and its parameters read\) with .*no-such-python3, which was not found; install Python 3/);
    expect(await library.list()).toEqual([]);
  });

  it("a hand edit of a .py file re-derives params and description (explicit ones stay)", async () => {
    const ts = await tsSession();
    await ts.run(`await workflows.create({ name: "triple", source: ${JSON.stringify(TRIPLE)}, language: "python" })`);
    await ts.run(`await workflows.create({ name: "named", source: ${JSON.stringify(TRIPLE)}, language: "python", description: "Given by hand." })`);
    for (const name of ["triple", "named"]) {
      const file = path.join(wf, `${name}.py`);
      const text = await readFile(file, "utf8");
      const [header, ...body] = text.split("\n");
      await writeFile(file, [header, ...body].join("\n").replace("def run(n: int, *, label: str = 'x') -> dict:", "def run(m: float = 1.5):").replace('"""Triple a number."""', '"""Scale a number."""'));
    }
    const byName = Object.fromEntries((await ts.listWorkflows()).map((w) => [w.name, w]));
    expect(byName["triple"]).toMatchObject({ language: "python", description: "Scale a number.", params: [{ name: "m", type: "float", required: false, default: 1.5 }] });
    expect(byName["named"]).toMatchObject({ description: "Given by hand.", params: [{ name: "m" }] });
    expect(byName["triple"]).not.toHaveProperty("problem");
  });

  it("listing runs python3 once per changed file: an unchanged hand-edited file is read from the catalogue, also by a new process", async () => {
    // A counting python3 first on PATH: it logs each start, then runs the real one.
    const bin = path.join(dir, "bin");
    const log = path.join(dir, "python-starts.log");
    await mkdir(bin);
    const real = (await which("python3"))!;
    await writeFile(path.join(bin, "python3"), `#!/bin/sh\necho start >> ${JSON.stringify(log)}\nexec ${JSON.stringify(real)} "$@"\n`);
    await chmod(path.join(bin, "python3"), 0o755);
    await mkdir(wf, { recursive: true });
    // Unique per run, so no cache of this process or of an earlier run knows the source.
    const source = `def run(k: int = ${Date.now()}):\n    """Hand-written."""\n    return k\n`;
    await writeFile(path.join(wf, "hand.py"), source);
    const list = () => runCli(["workflows", "list", "--json", "--base", dir], { PATH: `${bin}:${process.env["PATH"] ?? ""}` });
    const first = JSON.parse(await list()) as Array<{ name: string; params: unknown[]; description: string }>;
    expect(first).toMatchObject([{ name: "hand", description: "Hand-written.", params: [{ name: "k", type: "int" }] }]);
    const starts = async () => (await readFile(log, "utf8").catch(() => "")).split("\n").filter(Boolean).length;
    expect(await starts()).toBe(1);
    for (let i = 0; i < 2; i++) expect(JSON.parse(await list())).toEqual(first);
    expect(await starts()).toBe(1);
    await writeFile(path.join(wf, "hand.py"), source.replace("k: int", "j: int"));
    expect(JSON.parse(await list())).toMatchObject([{ params: [{ name: "j" }] }]);
    expect(await starts()).toBe(2);
  });

  it("a hand-written .py the reader refuses is listed with the problem, and not read again while unchanged; a missing python3 is tried again", async () => {
    const log = path.join(dir, "starts.log");
    const refusing = path.join(dir, "refusing-python");
    await writeFile(refusing, `#!/bin/sh\necho start >> ${JSON.stringify(log)}\ncat > /dev/null\necho '{"error": "the source is larger than 2097152 bytes"}'\n`);
    await chmod(refusing, 0o755);
    await mkdir(wf, { recursive: true });
    await writeFile(path.join(wf, "huge.py"), `def run():\n    return ${Date.now()}\n`);
    const library = new WorkflowLibrary(storage().workflows, { python: refusing });
    for (let i = 0; i < 3; i++) {
      expect(await library.list()).toMatchObject([{ name: "huge", language: "python", problem: expect.stringMatching(/larger than 2097152 bytes/) }]);
    }
    expect((await readFile(log, "utf8")).split("\n").filter(Boolean)).toHaveLength(1);
    const missing = new WorkflowLibrary(storage().workflows, { python: path.join(dir, "no-python") });
    await writeFile(path.join(wf, "other.py"), `def run():\n    return ${Date.now()}\n`);
    const listed = await missing.list();
    expect(listed.find((w) => w.name === "other")?.problem).toMatch(/no-python, which was not found/);
  });

  it("the python3 reader is bounded: a timeout kills its process group; sources past its cap and deep nesting are refused, not parsed", async () => {
    // An interpreter that starts a grandchild and never answers.
    const slow = path.join(dir, "slow-python");
    const pidFile = path.join(dir, "grandchild.pid");
    await writeFile(slow, `#!/bin/sh\nsleep 300 &\necho $! > ${JSON.stringify(pidFile)}\nwait\n`);
    await chmod(slow, 0o755);
    await expect(pythonWorkflowSignature(TRIPLE, { python: slow, timeoutMs: 300 })).rejects.toThrow(/timed out after 300 ms; the process was killed/);
    const pid = Number(await readFile(pidFile, "utf8"));
    await waitFor(() => !processesWith("sleep 300").some((p) => p.pid === pid), "the reader's grandchild to be killed");

    const deep = await pythonWorkflowSignature(`def run():\n    return ${"(".repeat(5000)}1${")".repeat(5000)}\n`);
    expect(deep.hasRun).toBe(false);
    expect(deep.syntaxError?.message).toMatch(/nested|recursion|memory/i);
    const big = await runPython(pythonGuestFile("workflow_signature.py"), "#".repeat(2 * 1024 * 1024 + 1));
    expect(JSON.parse(big)).toEqual({ error: expect.stringMatching(/larger than/) });
  });
});

async function sha(text: string): Promise<string> {
  const { createHash } = await import("node:crypto");
  return createHash("sha256").update(text).digest("hex");
}

async function which(cmd: string): Promise<string | null> {
  for (const d of (process.env["PATH"] ?? "").split(":")) {
    const p = path.join(d, cmd);
    try {
      await readFile(p);
      return p;
    } catch {
      // next
    }
  }
  return null;
}

function collect(child: ReturnType<typeof spawn>, input: string | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}`))));
    child.stdin!.end(input ?? "");
  });
}

function runCli(args: string[], env: Record<string, string>): Promise<string> {
  return collect(spawn(process.execPath, [MAIN, ...args], { cwd: dir, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] }), undefined);
}

function runPython(script: string, input: string): Promise<string> {
  return collect(spawn("python3", ["-I", script], { stdio: ["pipe", "pipe", "pipe"] }), input);
}
