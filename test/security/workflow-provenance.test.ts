/**
 * Trust does not leak across executors (issue 13, principle 5). A workflow saved by a sandbox
 * session is recorded as untrusted; trusted sessions (subprocess, in-process) refuse to run it until
 * the host approves it; a sandbox session cannot replace or delete a trusted workflow (one a trusted
 * session saved, an example added by `init`, or a hand-written file). Real executors on real
 * storage: FileStorage on a temp folder and RedisStorage on a throw-away redis-server.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Executor } from "../../src/execution/protocol.js";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { SandboxExecutor } from "../../src/execution/sandbox/executor.js";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import type { StorageBackend, WorkflowRecord } from "../../src/storage/protocol.js";
import { RedisStorage } from "../../src/storage/redis/storage.js";
import { WorkflowLibrary } from "../../src/workflows/library.js";
import { cleanup, cli, ensureBuilt, tempDir } from "../cli/harness.js";
import { deleteKeys, startRedis, uniquePrefix, type RedisServer } from "../helpers/redis.js";

const EXAMPLE_TRIPLE = path.resolve(import.meta.dirname, "../../examples/workflows/triple.ts");

/** What a sandboxed agent saves: harmless-looking, but it reaches for Node when it can. */
const PLANTED = `/** Report the machine's state. */
export async function run() {
  const g = globalThis as any;
  return typeof g.process === "object" && g.process?.versions?.node ? "ran with Node authority" : "ran contained";
}
`;

const createCode = (name: string, source: string) => `await workflows.create({ name: ${JSON.stringify(name)}, source: ${JSON.stringify(source)} })`;

type StorageKind = "file" | "redis";

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.close();
});

describe.each<StorageKind>(["file", "redis"])("workflow provenance on %s storage", (kind) => {
  let dir: string;
  let prefix: string;
  const open: Array<{ close(): Promise<void> }> = [];

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-provenance-"));
    prefix = uniquePrefix("prov");
  });
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    await deleteKeys(server.url, `${prefix}:`);
  });

  /** A new storage handle on the same data each time, as separate processes would have. */
  function storage(): StorageBackend {
    const s = kind === "file" ? new FileStorage({ basePath: dir }) : new RedisStorage({ url: server.url, prefix });
    open.push(s);
    return s;
  }

  async function session(executor: Executor, options: Partial<ConstructorParameters<typeof Session>[0]> = {}): Promise<Session> {
    const s = new Session({ storage: storage(), executor, ...options });
    open.push(s);
    await s.start();
    return s;
  }

  const sandbox = () => session(new SandboxExecutor());

  it("records who saved a workflow, and shows it in workflows.get/list (guest and host)", async () => {
    const sb = await sandbox();
    const created = await sb.run(createCode("report", PLANTED));
    expect(created.error).toBeNull();
    const seen = await sb.run(`const g = await workflows.get("report"); const l = await workflows.list(); [g.provenance, l[0].provenance]`);
    expect(seen.error).toBeNull();
    const [got, listed] = seen.value as [Record<string, unknown>, Record<string, unknown>];
    expect(got).toEqual({ trust: "untrusted", executor: "sandbox", savedAt: expect.any(String) });
    expect(listed).toEqual(got);
    expect(Number.isNaN(Date.parse(got["savedAt"] as string))).toBe(false);

    const trusted = await session(new InProcessExecutor());
    expect((await trusted.getWorkflow("report"))?.provenance).toEqual(got);
    expect((await trusted.listWorkflows())[0]?.provenance).toEqual(got);
    expect((await trusted.searchWorkflows("report machine state"))[0]?.provenance).toEqual(got);

    await trusted.addWorkflow({ name: "mine", source: "export async function run() { return 1; }" });
    expect((await trusted.getWorkflow("mine"))?.provenance).toMatchObject({ trust: "trusted", executor: "in-process" });
  });

  it("a subprocess session refuses to run a workflow a sandbox session saved until the host approves it", async () => {
    const sb = await sandbox();
    expect((await sb.run(createCode("report", PLANTED))).error).toBeNull();
    // The sandbox itself runs it freely: it runs there without authority.
    expect(await sb.run(`await workflows.report()`)).toMatchObject({ ok: true, value: "ran contained" });

    const sub = await session(new SubprocessExecutor());
    const refused = await sub.run(`await workflows.report()`);
    expect(refused.ok).toBe(false);
    expect(refused.error?.name).toBe("UntrustedWorkflowError");
    expect(refused.error?.message).toMatch(/untrusted sandbox session/);
    expect(refused.error?.message).toContain("ts-code-mode workflows approve report");
    expect(refused.error?.message).toContain('session.approveWorkflow("report")');
    // Every way in is closed: invoke, and a trusted workflow that calls the untrusted one.
    expect((await sub.run(`await workflows.invoke("report", {})`)).error?.name).toBe("UntrustedWorkflowError");
    await sub.addWorkflow({ name: "wrapper", source: "export async function run() { return await workflows.report(); }" });
    expect((await sub.run(`await workflows.wrapper()`)).error?.name).toBe("UntrustedWorkflowError");

    const approved = await sub.approveWorkflow("report");
    expect(approved.provenance).toMatchObject({ trust: "trusted", executor: "sandbox" });
    expect(approved.source).toBe(PLANTED);
    expect(await sub.run(`await workflows.report()`)).toMatchObject({ ok: true, value: "ran with Node authority" });
    expect(await sub.run(`await workflows.wrapper()`)).toMatchObject({ ok: true, value: "ran with Node authority" });
  });

  it("the in-process executor refuses too; approval covers the code reviewed, and an approved workflow is protected", async () => {
    const sb = await sandbox();
    expect((await sb.run(createCode("report", PLANTED))).error).toBeNull();
    const inproc = await session(new InProcessExecutor());
    expect((await inproc.run(`await workflows.report()`)).error?.name).toBe("UntrustedWorkflowError");
    const reviewed = (await inproc.getWorkflow("report"))?.source;
    // The sandbox swaps the code after the host looked at it: approving the reviewed code is refused.
    expect((await sb.run(createCode("report", PLANTED.replace("machine", "system")))).error).toBeNull();
    await expect(inproc.approveWorkflow("report", { source: reviewed! })).rejects.toThrow(/changed since it was reviewed/);
    expect((await inproc.getWorkflow("report"))?.provenance?.trust).toBe("untrusted");
    expect((await inproc.run(`await workflows.report()`)).error?.name).toBe("UntrustedWorkflowError");

    const current = (await inproc.getWorkflow("report"))!.source;
    await inproc.approveWorkflow("report", { source: current });
    expect((await inproc.run(`await workflows.report()`)).ok).toBe(true);
    // Approved means trusted: the sandbox can no longer swap it.
    const swap = await sb.run(createCode("report", PLANTED));
    expect(swap.error?.name).toBe("WorkflowProtectedError");
    expect(swap.error?.message).toMatch(/is trusted \(saved by a sandbox session at .*\); an untrusted sandbox session cannot replace it/);
    expect((await inproc.getWorkflow("report"))?.source).toBe(current);
  });

  it("untrustedWorkflows: a host callback sees the workflow and decides", async () => {
    const sb = await sandbox();
    expect((await sb.run(createCode("report", PLANTED))).error).toBeNull();
    const asked: Array<{ name: string; source: string; trust: string }> = [];
    const no = await session(new InProcessExecutor(), {
      untrustedWorkflows: (w) => {
        asked.push({ name: w.name, source: w.source, trust: w.provenance.trust });
        return false;
      },
    });
    expect((await no.run(`await workflows.report()`)).error?.name).toBe("UntrustedWorkflowError");
    expect(asked).toEqual([{ name: "report", source: PLANTED, trust: "untrusted" }]);

    const yes = await session(new SubprocessExecutor(), { untrustedWorkflows: async () => true });
    expect(await yes.run(`await workflows.report()`)).toMatchObject({ ok: true, value: "ran with Node authority" });
    expect((await yes.getWorkflow("report"))?.provenance).toMatchObject({ trust: "trusted", executor: "sandbox" });
    expect(() => new Session({ storage: storage(), untrustedWorkflows: "allow" as never })).toThrow(TypeError);
  });

  it("a sandbox session cannot replace or delete the trusted example workflow", async () => {
    // What `ts-code-mode init` does: the host adds the examples through a bare library.
    const host = new WorkflowLibrary(storage().workflows);
    await host.create({ name: "triple", source: await readFile(EXAMPLE_TRIPLE, "utf8") });

    const sb = await sandbox();
    const replaced = await sb.run(createCode("triple", PLANTED));
    expect(replaced.ok).toBe(false);
    expect(replaced.error?.name).toBe("WorkflowProtectedError");
    expect(replaced.error?.message).toMatch(/^workflows\.create: Workflow "triple" is trusted \(hand-written: no provenance recorded\); an untrusted sandbox session cannot replace it/);
    const deleted = await sb.run(`await workflows.delete("triple")`);
    expect(deleted.error?.name).toBe("WorkflowProtectedError");
    // The host facade of a sandbox session acts as that session: same rule.
    await expect(sb.addWorkflow({ name: "triple", source: PLANTED })).rejects.toMatchObject({ name: "WorkflowProtectedError" });
    await expect(sb.removeWorkflow("triple")).rejects.toMatchObject({ name: "WorkflowProtectedError" });

    const sub = await session(new SubprocessExecutor());
    expect(await sub.run(`await workflows.triple({ n: 5 })`)).toMatchObject({ ok: true, value: 15 });
    expect((await sub.getWorkflow("triple"))?.provenance).toBeUndefined();

    // Nor one a trusted session saved.
    await sub.addWorkflow({ name: "mine", source: "export async function run() { return 1; }" });
    const mine = await sb.run(createCode("mine", PLANTED));
    expect(mine.error?.name).toBe("WorkflowProtectedError");
    expect(mine.error?.message).toMatch(/is trusted \(saved by a subprocess session at .*\); an untrusted sandbox session cannot replace it/);
    expect((await sb.run(`await workflows.delete("mine")`)).error?.name).toBe("WorkflowProtectedError");

    // Its own workflows it replaces and deletes freely; a trusted session may replace them.
    expect((await sb.run(createCode("own", PLANTED))).error).toBeNull();
    expect((await sb.run(createCode("own", PLANTED.replace("state", "status")))).error).toBeNull();
    expect(await sb.run(`await workflows.delete("own")`)).toMatchObject({ ok: true, value: true });
    expect((await sb.run(createCode("own", PLANTED))).error).toBeNull();
    await sub.addWorkflow({ name: "own", source: "export async function run() { return 2; }" });
    expect((await sub.getWorkflow("own"))?.provenance?.trust).toBe("trusted");
    expect((await sb.run(`await workflows.delete("own")`)).error?.name).toBe("WorkflowProtectedError");
  });

  it("provenance round-trips through the store as written", async () => {
    const record: WorkflowRecord = {
      name: "stored",
      source: "export async function run() { return 1; }\n",
      description: "Stored.",
      descriptionExplicit: true,
      params: [],
      createdAt: "2026-01-02T03:04:05.000Z",
      updatedAt: "2026-01-02T03:04:05.000Z",
      author: "agent",
      provenance: { trust: "untrusted", executor: "sandbox", savedAt: "2026-01-02T03:04:05.000Z" },
    };
    await storage().workflows.save(record);
    const again = storage();
    expect((await again.workflows.get("stored"))?.provenance).toEqual(record.provenance);
    expect((await again.workflows.list()).find((r) => r.name === "stored")?.provenance).toEqual(record.provenance);
    await expect(again.workflows.save({ ...record, provenance: { trust: "root", executor: "x", savedAt: "" } as never })).rejects.toThrow(/Invalid workflow record/);
  });
});

describe("hand-written workflow files", () => {
  let dir: string;
  const open: Array<{ close(): Promise<void> }> = [];
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-provenance-"));
  });
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  async function session(executor: Executor): Promise<Session> {
    const storage = new FileStorage({ basePath: dir });
    const s = new Session({ storage, executor });
    open.push(storage, s);
    await s.start();
    return s;
  }

  it("count as trusted: a sandbox session cannot overwrite them, trusted sessions run them", async () => {
    await new FileStorage({ basePath: dir }).close(); // creates workflows/
    await writeFile(path.join(dir, "workflows", "hand.js"), "export async function run() { return 'by hand'; }\n");
    const sb = await session(new SandboxExecutor());
    expect((await sb.run(createCode("hand", PLANTED))).error?.name).toBe("WorkflowProtectedError");
    expect((await sb.run(`await workflows.delete("hand")`)).error?.name).toBe("WorkflowProtectedError");
    const sub = await session(new SubprocessExecutor());
    expect(await sub.run(`await workflows.hand()`)).toMatchObject({ ok: true, value: "by hand" });
  });

  it("Session.fromBase takes the same untrustedWorkflows policy", async () => {
    const sb = await session(new SandboxExecutor());
    expect((await sb.run(createCode("report", PLANTED))).error).toBeNull();
    const refusing = await Session.fromBase(dir);
    open.push(refusing.storage, refusing);
    expect((await refusing.run(`await workflows.report()`)).error?.name).toBe("UntrustedWorkflowError");
    const approving = await Session.fromBase(dir, { untrustedWorkflows: () => true });
    open.push(approving.storage, approving);
    expect(await approving.run(`await workflows.report()`)).toMatchObject({ ok: true, value: "ran with Node authority" });
  });

  it("a hand edit of a sandbox-saved workflow does not make it trusted", async () => {
    const sb = await session(new SandboxExecutor());
    expect((await sb.run(createCode("report", PLANTED))).error).toBeNull();
    await writeFile(path.join(dir, "workflows", "report.ts"), PLANTED.replace("state", "status"));
    const inproc = await session(new InProcessExecutor());
    expect((await inproc.getWorkflow("report"))?.provenance?.trust).toBe("untrusted");
    expect((await inproc.run(`await workflows.report()`)).error?.name).toBe("UntrustedWorkflowError");
  });
});

describe("the sandbox (deno engine) records untrusted provenance too", () => {
  let dir: string;
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  it("saves as untrusted sandbox", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-provenance-"));
    const storage = new FileStorage({ basePath: dir });
    const s = new Session({ storage, executor: new SandboxExecutor({ engine: "deno" }) });
    try {
      expect((await s.run(createCode("report", PLANTED))).error).toBeNull();
      expect((await s.getWorkflow("report"))?.provenance).toMatchObject({ trust: "untrusted", executor: "sandbox" });
      expect(s.trust).toBe("untrusted");
    } finally {
      await s.close();
      await storage.close();
    }
  });
});

describe("the command line", () => {
  let dir: string;
  beforeAll(ensureBuilt);
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(async () => {
    await cleanup(dir);
  });
  const on = (args: string[]) => cli([...args, "--base", "base"], { cwd: dir });

  it("init's example is protected from the sandbox; sandbox code runs in trusted sessions only after `workflows approve`", async () => {
    expect((await cli(["init", "--base", "base"], { cwd: dir })).code).toBe(0);
    const replace = await on(["run", "--executor", "sandbox", createCode("triple", PLANTED)]);
    expect(replace.code).not.toBe(0);
    expect(replace.stderr).toMatch(/WorkflowProtectedError: workflows\.create: Workflow "triple" is trusted/);
    expect((await on(["run", "await workflows.triple({ n: 2 })"])).stdout).toContain("6");

    expect((await on(["run", "--executor", "sandbox", createCode("report", PLANTED)])).code).toBe(0);
    const refused = await on(["run", "await workflows.report()"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/UntrustedWorkflowError: .*untrusted sandbox session/);

    const list = await on(["workflows", "list"]);
    expect(list.stdout).toMatch(/^WORKFLOW\s+PARAMS\s+DESCRIPTION\s+TRUST$/m);
    expect(list.stdout).toMatch(/^report\s.*\suntrusted$/m);
    expect(list.stdout).toMatch(/^triple\s.*\strusted$/m);
    const json = JSON.parse((await on(["workflows", "list", "--json"])).stdout) as Array<{ name: string; provenance?: { trust: string } }>;
    expect(json.find((w) => w.name === "report")?.provenance).toMatchObject({ trust: "untrusted", executor: "sandbox" });
    const show = await on(["workflows", "show", "report"]);
    expect(show.stdout).toMatch(/^Provenance: untrusted \(saved by a sandbox session at \S+\)$/m);
    expect((await on(["workflows", "show", "triple"])).stdout).toMatch(/^Provenance: trusted \(hand-written: no provenance recorded\)$/m);

    const approve = await on(["workflows", "approve", "report"]);
    expect(approve.code).toBe(0);
    expect(approve.stdout).toMatch(/^Workflow report is trusted \(saved by a sandbox session at \S+\); trusted sessions now run it\.$/m);
    const ran = await on(["run", "await workflows.report()"]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain("ran with Node authority");
    expect((await on(["workflows", "approve", "nope"])).stderr).toMatch(/Unknown workflow: nope/);
    // Fourteen CLI processes, two of them sandboxes: more than the default 30 s on a loaded machine.
  }, 120_000);
});
