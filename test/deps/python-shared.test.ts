/**
 * Python deps the operator configures (PythonExecutor's `deps`: installed with pip when the executor
 * starts, with progress) and the Python deps list on Redis: one list per prefix shared by every
 * machine (`<prefix>:deps:python`, apart from the npm list), each machine installing it into its own
 * local venv when it starts. Real python3, pip and redis-server; a "machine" is a home folder of its
 * own (a storage without a disk home keeps the venv under ~/.cache/ts-code-mode).
 */
import { existsSync } from "node:fs";
import { cp, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PythonExecutor } from "../../src/execution/python/executor.js";
import { Session } from "../../src/session.js";
import { RedisStorage } from "../../src/storage/redis/storage.js";
import { listKeys, startRedis, uniquePrefix, type RedisServer } from "../helpers/redis.js";

const CONFIGURED = "text-unidecode==1.3";
const ADDED = "appdirs==1.4.4";

let redis: RedisServer;
let root: string;
const realHome = process.env["HOME"];
const sessions: Session[] = [];

beforeAll(async () => {
  redis = await startRedis();
  root = await mkdtemp(path.join(os.tmpdir(), "tcm-pyshared-"));
});

afterAll(async () => {
  process.env["HOME"] = realHome;
  await Promise.all(sessions.splice(0).map((s) => s.close()));
  await redis?.stop();
  await rm(root, { recursive: true, force: true, maxRetries: 5 });
});

/** A session on `machine` (its own home folder, so its own venv) over the shared Redis prefix. */
async function onMachine(machine: string, prefix: string, options: { deps?: string[]; progress?: string[] } = {}): Promise<Session> {
  const home = path.join(root, machine);
  // Configured like this machine: pip's user configuration (the local index) comes along.
  const pipConfig = path.join(realHome ?? os.homedir(), ".config", "pip");
  if (existsSync(pipConfig)) await cp(pipConfig, path.join(home, ".config", "pip"), { recursive: true });
  process.env["HOME"] = home;
  const executor = new PythonExecutor({
    defaultTimeoutMs: 240_000,
    ...(options.deps ? { deps: options.deps } : {}),
    ...(options.progress ? { onDepsOutput: (line: string) => options.progress!.push(line) } : {}),
  });
  const session = new Session({ storage: new RedisStorage({ url: redis.url, prefix }), executor });
  sessions.push(session);
  try {
    await session.start();
  } finally {
    process.env["HOME"] = realHome;
  }
  return session;
}

const venvOfMachine = (machine: string) => path.join(root, machine, ".cache", "ts-code-mode", "deps", "python", "venv");

describe("Python deps configured by the operator, listed on Redis", () => {
  it("the operator's deps are checked at construction and installed on start with progress; agents cannot remove them", async () => {
    expect(() => new PythonExecutor({ deps: ["requests; os.system('x')"] })).toThrow(/Environment markers/);
    expect(() => new PythonExecutor({ deps: ["lodash@^4"] })).toThrow(/URLs, VCS and direct references/);
    const progress: string[] = [];
    const a = await onMachine("a", uniquePrefix("pyops"), { deps: [CONFIGURED], progress });
    expect(progress[0]).toBe(`installing 1 configured package: ${CONFIGURED}`);
    expect(progress.some((l) => /text.unidecode/i.test(l) && l !== progress[0])).toBe(true);
    const run = await a.run("import text_unidecode\n(text_unidecode.unidecode('café'), deps.list())");
    expect(run.error).toBeNull();
    expect(run.value).toEqual(["cafe", [{ name: "text-unidecode", spec: CONFIGURED, configured: true, installed: true }]]);
    expect((await a.run("deps.remove('text-unidecode')")).value).toMatchObject({ removed: false, note: expect.stringMatching(/configured by the operator/) });
    expect(existsSync(venvOfMachine("a"))).toBe(true);
  }, 300_000);

  it("deps.add on one machine writes the shared Redis list; a second machine installs it into its own venv on start", async () => {
    const prefix = uniquePrefix("pyshared");
    // Machine "a" again: its venv is made already (a venv costs seconds); "b" is the new machine.
    const a = await onMachine("a", prefix);
    const added = await a.run(`deps.add(${JSON.stringify(ADDED)})`, { timeoutMs: 240_000 });
    expect(added.value).toEqual({ installed: [ADDED], alreadyPresent: [], failed: [] });
    // The list is on Redis, under its own key; the npm list is untouched.
    expect(await listKeys(redis.url, prefix)).toContain(`${prefix}:deps:python`);
    expect(await listKeys(redis.url, prefix)).not.toContain(`${prefix}:deps`);
    expect(existsSync(venvOfMachine("b"))).toBe(false);
    const progress: string[] = [];
    const b = await onMachine("b", prefix, { progress });
    expect(progress[0]).toBe(`installing 1 configured package: ${ADDED}`);
    expect(existsSync(venvOfMachine("b"))).toBe(true);
    const run = await b.run("import appdirs\n(appdirs.__version__, [d['spec'] for d in deps.list()])");
    expect(run.error).toBeNull();
    expect(run.value).toEqual(["1.4.4", [ADDED]]);
  }, 300_000);
});
