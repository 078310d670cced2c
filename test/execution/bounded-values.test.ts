/**
 * Host work on guest values is bounded in every executor that runs agent code in or next to the
 * host (in-process, subprocess): values of hostile shape as a run's value or as arguments, names
 * of 30,000,000 characters, console labels in a loop. Real sessions over a real FileStorage and the
 * example tools; each case finishes only because the host's work is bounded (no timing asserted).
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Executor } from "../../src/execution/protocol.js";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { EXAMPLE_TOOLS_PATH } from "../conformance/executor.js";

const DAG = "let dag: any = [1]; for (let i = 0; i < 40; i++) dag = [dag, dag];";
const WIDE_DEEP = "let wide: any = 0; for (let l = 0; l < 7; l++) { const n: any = {}; for (let k = 0; k < 60; k++) n['k' + k] = wide; wide = n; }";
/** The guest's view of what `expr` threw: "Name: message" (message cut to 400 characters), or "no error". */
const CATCH = (expr: string) => `let caught = "no error"; try { await (${expr}); } catch (e: any) { caught = e.name + ": " + e.message.slice(0, 400); } caught`;

const executors: Array<[string, () => Executor]> = [
  ["InProcessExecutor", () => new InProcessExecutor({ toolsPath: EXAMPLE_TOOLS_PATH })],
  ["SubprocessExecutor", () => new SubprocessExecutor({ toolsPath: EXAMPLE_TOOLS_PATH })],
];

describe.each(executors)("bounded host work: %s", (_name, make) => {
  let dir: string;
  let s: Session;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-bounded-"));
    s = new Session({ storage: new FileStorage({ basePath: dir }), executor: make() });
    await s.start();
  });
  afterAll(async () => {
    await s.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  it("a value 7 deep and 60 wide made of one shared object: display is cut and says why", async () => {
    const r = await s.run(`${WIDE_DEEP} wide`);
    expect(r.ok).toBe(true);
    expect(r.display).toMatch(/display cut: the value is more than 10,000 values \(2,799,360,000,000 paths through shared references/);
  });

  it("a DAG of 2^40 paths as a run's value comes back promptly", async () => {
    const r = await s.run(`${DAG} dag`);
    expect(r.ok).toBe(true);
    expect(r.display).toContain("[Array]");
  });

  it("artifacts.save of a DAG of 2^40 paths, as data or in metadata, fails with a ValidationError saying why", async () => {
    const data = await s.run(`${DAG} ${CATCH('artifacts.save("dag", dag)')}`);
    expect(data.value).toMatch(/^ValidationError: artifacts\.save: .*more than 2,000,000 values \(about 2\^40 paths through shared references/);
    const meta = await s.run(`${DAG} ${CATCH('artifacts.save("dag-meta", "x", { metadata: { dag } })')}`);
    expect(meta.value).toMatch(/^ValidationError: artifacts\.save: .*2\^40 paths/);
    expect(await s.run(`await artifacts.exists("dag")`)).toMatchObject({ value: false });
  });

  it("a 30,000,000-character tool, callable or workflow name, or search query, is refused at once within the run's deadline", async () => {
    const huge = `"x".repeat(30_000_000)`;
    for (const call of [`tools.call(${huge}, "a", {})`, `tools.call("echo", ${huge}, {})`, `workflows.get(${huge})`, `workflows.invoke(${huge}, {})`, `tools.search(${huge})`]) {
      const r = await s.run(CATCH(call), { timeoutMs: 5_000 });
      expect(r.error).toBeNull();
      expect(r.value).toMatch(/^ValidationError: .*is 30,000,000 characters long; at most/);
    }
  });

  it("a 30,000,000-character argument key is refused; an unknown short one still gets a hint", async () => {
    const r = await s.run(CATCH(`tools.echo.say({ ["k".repeat(30_000_000)]: 1, text: ["a"] })`), { timeoutMs: 5_000 });
    expect(r.value).toMatch(/^ValidationError: tools\.echo\.say: the arguments have a property name of 30,000,000 characters/);
    const hint = await s.run(CATCH(`tools.echo.say({ txt: ["a"] })`));
    expect(hint.value).toMatch(/Did you mean: text\?/);
  });

  it("console.count / console.time labels are bounded: the oldest label is forgotten", async () => {
    const r = await s.run(`
      for (let i = 0; i < 1_500; i++) { console.count("label" + i); console.time("t" + i); }
      console.count("k".repeat(5_000_000));
      console.count("label0");
      console.timeEnd("t0");
      console.timeEnd("t1499");
      "done"`);
    expect(r.value).toBe("done");
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines.at(-3)).toMatch(/^k{1000}…: 1$/);
    expect(lines.at(-2)).toBe("label0: 1");
    // t0 was forgotten (timeEnd prints nothing for it); t1499 is still there.
    expect(lines.at(-1)).toMatch(/^t1499: [\d.]+ms$/);
  });
});

/**
 * Issue 32: a run's value is measured in the child before it is sent (RUN_VALUE_LIMITS): a value of
 * 1 GiB made an MCP server over the subprocess executor grow from 81 to 2,136 MB receiving it.
 */
describe("a run's value is bounded in the child: SubprocessExecutor", () => {
  let dir: string;
  let s: Session;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-bounded-value-"));
    s = new Session({ storage: new FileStorage({ basePath: dir }), executor: new SubprocessExecutor({ defaultTimeoutMs: 60_000 }) });
    await s.start();
  });
  afterAll(async () => {
    await s.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  it("a 100 MB value stays in the child; its display says why; a 1 MB value and variables still cross", async () => {
    const big = await s.run(`globalThis.kept = 7; new Uint8Array(100 * 1_048_576)`);
    expect(big.ok).toBe(true);
    expect(big.value).toBeUndefined();
    expect(big.display).toMatch(/\[the run's value was not sent to the host: it is larger than 64 MB; return a smaller value/);
    const deep = await s.run(`let d: any = 0; for (let i = 0; i < 1_500; i++) d = [d]; d`);
    expect(deep.value).toBeUndefined();
    expect(deep.display).toMatch(/nested more than 1000 levels deep/);
    const small = await s.run(`[kept, new Uint8Array(1_048_576).length]`);
    expect(small.value).toEqual([7, 1_048_576]);
  });
});

/**
 * Issue 32: a tool result nested 2,000,000 deep cannot be serialized onto the child's channel (the
 * serializer's recursion overflows). The call fails at once with why; before, the reply was dropped
 * and the run waited out its whole timeout.
 */
describe("a tool result too deep to send fails the call at once: SubprocessExecutor", () => {
  let dir: string;
  let s: Session;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-deep-reply-"));
    const tools = new ToolRegistry();
    tools.register({
      name: "deep",
      info: async () => ({ name: "deep", type: "toolable", description: "Returns a value nested 2,000,000 deep", tags: [], direct: null, callables: [{ name: "get", description: "", params: [], returns: "unknown" }] }),
      call: async () => {
        let v: unknown = {};
        for (let i = 0; i < 2_000_000; i++) v = { v };
        return v;
      },
      close: async () => undefined,
    });
    // A timeout the fixed call never comes near; without the fix the run ends in it (TimeoutError).
    s = new Session({ storage: new FileStorage({ basePath: dir }), executor: new SubprocessExecutor({ tools, defaultTimeoutMs: 60_000 }) });
    await s.start();
  });
  afterAll(async () => {
    await s.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  it("tools.deep.get() rejects with a DataCloneError naming the call and the depth; the session goes on", async () => {
    const r = await s.run(CATCH("tools.deep.get()"));
    expect(r.error).toBeNull();
    expect(r.value).toMatch(/^DataCloneError: tools\.deep\.get: the result could not be sent to the code: it is nested more than 1,000 levels deep at \$\.v\.v/);
    expect((await s.run("1 + 1")).value).toBe(2);
  }, 120_000);
});
