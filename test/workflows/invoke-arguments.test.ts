/**
 * Workflows are checked like tools: a call with a name the workflow does not take is refused in
 * every executor (the check runs in the shared guest namespaces), unless `run`'s parameters are
 * open (`run(args)` untyped), where every name is passed on as before.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileStorage, InProcessExecutor, SandboxExecutor, Session, SubprocessExecutor, type Executor } from "../../src/index.js";

const executors: Array<[string, () => Executor]> = [
  ["in-process", () => new InProcessExecutor()],
  ["subprocess", () => new SubprocessExecutor()],
  ["sandbox (quickjs)", () => new SandboxExecutor()],
  ["sandbox (deno)", () => new SandboxExecutor({ engine: "deno" })],
];

describe.each(executors)("workflow arguments (%s)", (_label, make) => {
  let session: Session;
  // One base per executor: a sandbox session may not replace workflows a trusted one saved.
  let base: string;
  beforeAll(async () => {
    base = await mkdtemp(path.join(os.tmpdir(), "tcm-wf-args-"));
    session = new Session({ storage: new FileStorage({ basePath: base }), executor: make() });
    await session.addWorkflow({ name: "retry", source: "export async function run({ n, retries = 3 }: { n: number; retries?: number }) { return n * retries; }" });
    await session.addWorkflow({ name: "none", source: "export async function run() { return 1; }" });
    await session.addWorkflow({ name: "loose", source: "export async function run(args) { return Object.keys(args).sort(); }" });
  });
  afterAll(async () => {
    await session.close();
    await rm(base, { recursive: true, force: true, maxRetries: 5 });
  });

  it("refuses a name the workflow does not take, listing its parameters", async () => {
    const r = await session.run("await workflows.retry({ n: 2, retry: 5 })");
    expect(r.ok).toBe(false);
    expect(r.error?.name).toBe("ValidationError");
    expect(r.error?.message).toBe('workflows.invoke: workflow "retry" has no parameter(s) "retry"; its parameters: n: number, retries?: number');
  });

  it("refuses any argument to a workflow that takes none", async () => {
    const r = await session.run('await workflows.invoke("none", { x: 1 })');
    expect(r.error?.message).toBe('workflows.invoke: workflow "none" has no parameter(s) "x"; it takes no parameters');
  });

  it("still runs with known names, and passes every name to an open run(args)", async () => {
    expect((await session.run("await workflows.retry({ n: 2 })")).value).toBe(6);
    expect((await session.run("await workflows.loose({ b: 1, a: 2 })")).value).toEqual(["a", "b"]);
  });
});
