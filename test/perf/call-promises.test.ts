/**
 * Promises the host makes per tool call, per executor (issue 42 item 3, calls at the floor). Each
 * one costs about twice what it would once the write deadline's AsyncLocalStorage has turned on
 * Node's promise hooks, so the call path is written with as few as it can (one `then` where an
 * async function awaited another, no middleware chain without middleware, the adapter's info
 * without awaiting it). Counted with async_hooks, which is exact whatever the machine's load: the
 * PROMISE inits of a run of 200 calls minus a run of none, / 200. The tool is a code tool
 * (defineTool with a zod schema), the way a TypeScript program defines one; its async `execute`
 * makes one promise and the race against the run's end two more. The bounds are today's counts
 * (a code tool call made 19 in a subprocess session before the path was rewritten); a change
 * that adds a promise to every call fails here. Own process (test/perf): hooks are process-wide.
 */
import { createHook } from "node:async_hooks";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineTool } from "../../src/tools/code/define.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { Session } from "../../src/session.js";
import type { Executor } from "../../src/execution/protocol.js";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { SandboxExecutor } from "../../src/execution/sandbox/executor.js";

const ping = defineTool({ name: "ping", description: "Answers at once", input: z.object({}), execute: async () => "pong" });
const CALLS = 200;

let promises = 0;
let counting = false;
const hook = createHook({
  init(_id, type) {
    if (counting && type === "PROMISE") promises++;
  },
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-call-promises-"));
  hook.enable();
});
afterAll(async () => {
  hook.disable();
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

/** Host promises made per tool call by a run in `session`. */
async function perCall(session: Session): Promise<number> {
  const count = async (n: number) => {
    promises = 0;
    counting = true;
    const r = await session.run(`for (let i = 0; i < ${n}; i++) await tools.ping({});`);
    counting = false;
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    return promises;
  };
  await count(10); // warm: first calls compile, load and cache
  const none = await count(0);
  const many = await count(CALLS);
  return (many - none) / CALLS;
}

const CASES: Array<{ name: string; make: () => Executor; most: number }> = [
  // Includes the guest's own `await` of each call (2): guest and host share the process.
  { name: "in-process", make: () => new InProcessExecutor({ tools: [ping] }), most: 12 },
  { name: "subprocess", make: () => new SubprocessExecutor({ tools: [ping], spareChild: false }), most: 7 },
  { name: "sandbox (QuickJS)", make: () => new SandboxExecutor({ tools: [ping] }), most: 10 },
];

describe("host promises per tool call", () => {
  for (const c of CASES) {
    it(`${c.name}: at most ${c.most}`, async () => {
      const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, c.name.replace(/\W+/g, "-")) }), executor: c.make() });
      try {
        const n = await perCall(session);
        expect(n).toBeLessThanOrEqual(c.most);
        // Sanity: the count is of something (a call cannot cost none).
        expect(n).toBeGreaterThanOrEqual(1);
      } finally {
        await session.close();
      }
    });
  }
});
