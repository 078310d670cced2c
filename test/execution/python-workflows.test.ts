/**
 * Python workflows: a Python guest saves a `def run(...)` module with language "python" (checked,
 * docstring and signature read by the guest's `ast`), the stores keep the language, a Python
 * session runs it in its own interpreter with keyword arguments, and the other language is refused
 * by name. Real python3 processes, a real redis-server.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { PythonExecutor } from "../../src/execution/python/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import type { StorageBackend, WorkflowRecord } from "../../src/storage/protocol.js";
import { RedisStorage } from "../../src/storage/redis/storage.js";
import { startRedis, uniquePrefix, type RedisServer } from "../helpers/redis.js";

const TRIPLE = ["import os", "", "def run(n: int, *, label: str = 'x') -> dict:", '    """Triple a number."""', "    return {'value': n * 3, 'label': label, 'pid': os.getpid()}", ""].join("\n");
const ASYNC_DOUBLE = ["import asyncio", "", "async def run(n):", "    await asyncio.sleep(0)", "    return n * 2", ""].join("\n");

describe("Python workflows", () => {
  let dir: string;
  const sessions: Session[] = [];

  async function open(language: "python" | "typescript", storage: StorageBackend = new FileStorage({ basePath: dir })): Promise<Session> {
    const executor = language === "python" ? new PythonExecutor({ defaultTimeoutMs: 10_000 }) : new InProcessExecutor({ defaultTimeoutMs: 10_000 });
    const session = new Session({ storage, executor });
    sessions.push(session);
    await session.start();
    return session;
  }

  const create = (name: string, source: string) => `workflows.create(name=${JSON.stringify(name)}, source=${JSON.stringify(source)}, language='python')`;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-pyflows-"));
  });

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  it("a Python guest saves one with its docstring and signature, lists its language, and runs it with kwargs in its own interpreter", async () => {
    const py = await open("python");
    const created = await py.run(create("triple", TRIPLE));
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
    expect((await py.run("[(w['name'], w.get('language')) for w in workflows.list()]")).value).toEqual([["triple", "python"]]);
    const pid = (await py.run("import os\nos.getpid()")).value;
    expect((await py.run("workflows.triple(n=4)")).value).toEqual({ value: 12, label: "x", pid });
    expect((await py.run("workflows.invoke('triple', {'n': 5, 'label': 'y'})['value']")).value).toBe(15);
    // Python itself checks the keywords.
    const wrong = await py.run("workflows.triple(m=1)");
    expect(wrong.error?.name).toBe("TypeError");
    expect(wrong.error?.message).toMatch(/unexpected keyword argument 'm'/);
  });

  it("an async run works from sync code and, with call_async, from code that awaits", async () => {
    const py = await open("python");
    expect((await py.run(create("double", ASYNC_DOUBLE))).error ?? undefined).toBeUndefined();
    expect((await py.run("workflows.double(n=4)")).value).toBe(8);
    expect((await py.run("import asyncio\nawait asyncio.sleep(0)\nawait workflows.double.call_async(n=5)")).value).toBe(10);
  });

  it("the guest refuses Python that does not parse or defines no run, before anything is saved", async () => {
    const py = await open("python");
    const bad = await py.run(create("bad", "def run(:\n"));
    expect(bad.error?.name).toBe("SyntaxError");
    const norun = await py.run(create("norun", "def main():\n    return 1\n"));
    expect(norun.error?.message).toMatch(/must define a function named run/);
    expect(await py.listWorkflows()).toEqual([]);
  });

  it("each language refuses the other's workflow, naming its language", async () => {
    const py = await open("python");
    expect((await py.run(create("triple", TRIPLE))).error ?? undefined).toBeUndefined();
    const ts = await open("typescript");
    const refused = await ts.run("await workflows.triple({ n: 4 })");
    expect(refused.error?.name).toBe("ValidationError");
    expect(refused.error?.message).toMatch(/"triple" is a Python workflow; a TypeScript session cannot run it/);
    // The TypeScript workflow is type-checked on the host (the checker loads on first use): seconds on a loaded machine.
    const created = await ts.run("await workflows.create({ name: 'tsdouble', source: 'export async function run({ n }: { n: number }) { return n * 2; }' })", { timeoutMs: 60_000 });
    expect(created.error ?? undefined).toBeUndefined();
    const back = await py.run("workflows.tsdouble(n=1)");
    expect(back.error?.name).toBe("ValidationError");
    expect(back.error?.message).toMatch(/"tsdouble" is a TypeScript workflow; a Python session cannot run it/);
  });

  it("a trusted Python session refuses a Python workflow an untrusted session saved, as for TypeScript", async () => {
    const storage = new FileStorage({ basePath: dir });
    await storage.workflows.save({
      name: "triple",
      source: TRIPLE,
      description: "",
      language: "python",
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:00.000Z",
      provenance: { trust: "untrusted", executor: "sandbox", savedAt: "2026-01-01T00:00:00.000Z" },
    });
    const py = await open("python", storage);
    const r = await py.run("workflows.triple(n=1)");
    expect(r.error?.name).toBe("UntrustedWorkflowError");
  });

  it("params are accepted only for a Python workflow", async () => {
    const ts = await open("typescript");
    const r = await ts.run("await workflows.create({ name: 'x', source: 'export function run() { return 1; }', params: [] })");
    expect(r.error?.message).toMatch(/only a Python workflow takes them/);
  });

  describe("the stores keep the language", () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(async () => {
      await redis.stop();
    });

    const record: WorkflowRecord = {
      name: "triple",
      source: TRIPLE,
      description: "Triple a number.",
      params: [{ name: "n", type: "int", required: true }],
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:00.000Z",
      language: "python",
    };

    it("FileStorage: in <name>.py with the header line, kept by a hand edit; a record without it stays TypeScript", async () => {
      const storage = new FileStorage({ basePath: dir });
      try {
        await storage.workflows.save(record);
        expect((await storage.workflows.get("triple"))?.language).toBe("python");
        const file = path.join(dir, "workflows", "triple.py");
        const text = await readFile(file, "utf8");
        expect(text.split("\n")[0]).toMatch(/^# ts-code-mode workflow \{.*"language":"python"/);
        expect(text.slice(text.indexOf("\n") + 1)).toBe(TRIPLE);
        await writeFile(file, `${text}# edited by hand\n`);
        expect((await storage.workflows.get("triple"))?.language).toBe("python");
        const { language: _language, ...plain } = record;
        await storage.workflows.save({ ...plain, name: "plain" });
        expect(await storage.workflows.get("plain")).not.toHaveProperty("language");
        await expect(storage.workflows.save({ ...record, language: "ruby" as "python" })).rejects.toThrow(/language/);
      } finally {
        await storage.close();
      }
    });

    it("RedisStorage: round-trips it, and a Python session runs a workflow saved there", async () => {
      const storage = new RedisStorage({ url: redis.url, prefix: uniquePrefix("pyflows") });
      await storage.workflows.save(record);
      expect((await storage.workflows.get("triple"))?.language).toBe("python");
      expect((await storage.workflows.list()).map((r) => r.language)).toEqual(["python"]);
      const py = await open("python", storage);
      expect((await py.run("workflows.triple(n=2)['value']")).value).toBe(6);
    });
  });
});
