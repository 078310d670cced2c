/**
 * Guest code never outlives its run (issue 13, principle 3), in the in-process and subprocess
 * executors: after a run ends nothing the guest left behind — a timer, an interval, an immediate,
 * a promise chain still going — executes its effects on the host until the next run, and no
 * namespace call reaches the host once the run's result is out. Real executors, a real probe tool
 * counting the calls it gets.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import type { Executor } from "../../src/execution/protocol.js";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { ProbeAdapter } from "../helpers/adapters.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** True once `file` exists, false after `ms` without it (nothing is run meanwhile). */
async function fileWithin(file: string, ms: number): Promise<boolean> {
  for (const started = Date.now(); !existsSync(file); await sleep(5)) if (Date.now() - started > ms) return false;
  return true;
}

/**
 * Runs `0` until the guest has written `file`: code left behind by an earlier run gets its turn
 * only while a run is going (the subprocess child is frozen between runs). Returns those runs'
 * stderr. Bounded: a guest that never writes the file fails the test.
 */
async function runUntilFile(session: Session, file: string): Promise<string> {
  let stderr = "";
  for (const started = Date.now(); !existsSync(file); await sleep(5)) {
    if (Date.now() - started > 30_000) throw new Error(`${file} was not written within 30 s`);
    stderr += (await session.run("0")).stderr;
  }
  return stderr;
}

const executors: [string, (tools: ToolRegistry) => Executor][] = [
  ["InProcessExecutor", (tools) => new InProcessExecutor({ tools, defaultTimeoutMs: 5_000 })],
  ["SubprocessExecutor", (tools) => new SubprocessExecutor({ tools, defaultTimeoutMs: 5_000 })],
];

for (const [name, create] of executors) {
  describe(`${name}: guest code never outlives its run`, () => {
    let dir: string;
    let session: Session;
    let probe: ProbeAdapter;

    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), "tcm-run-ends-"));
      probe = new ProbeAdapter();
      const tools = new ToolRegistry();
      tools.register(probe);
      session = new Session({ storage: new FileStorage({ basePath: dir }), executor: create(tools) });
      await session.start();
    });

    afterAll(async () => {
      await session.close();
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    });

    async function value(code: string): Promise<unknown> {
      const r = await session.run(code);
      expect(r.error).toBeNull();
      return r.value;
    }

    it("a timer left pending when the run returns never fires, and calls no tool", async () => {
      const before = probe.contexts.length;
      expect(await value("var timerFired = 0; setTimeout(() => { timerFired++; void tools.probe.echo({ value: 'late' }) }, 10); 'returned'")).toBe("returned");
      await sleep(150);
      expect(probe.contexts.length).toBe(before);
      expect(await value("timerFired")).toBe(0);
    });

    it("an interval stops when its run ends and stays stopped", async () => {
      expect(await value("var ticks = 0; setInterval(() => ticks++, 2); await new Promise((r) => setTimeout(r, 40)); ticks > 0")).toBe(true);
      const first = await value("ticks");
      await sleep(100);
      expect(await value("ticks")).toBe(first);
    });

    it("an immediate left by the run does not run", async () => {
      expect(await value("var immediateRan = false; setImmediate(() => { immediateRan = true }); 'returned'")).toBe("returned");
      await sleep(50);
      expect(await value("immediateRan")).toBe(false);
    });

    it("code resumed after the result (by Node's own timers) makes no host call; the refusal is reported", async () => {
      const before = probe.contexts.length;
      // The code resumes when the test says so, after it has the result (a fixed delay could fire
      // first on a loaded machine), and leaves a file once its call has failed.
      const go = path.join(dir, "resume-go");
      const refused = path.join(dir, "resume-refused");
      const r = await session.run(
        `(async () => { const fs = require('node:fs'); await new Promise((r) => { const poll = () => (fs.existsSync(${JSON.stringify(go)}) ? r() : require('node:timers').setTimeout(poll, 5)); poll(); }); await tools.probe.echo({ value: 'after the result' }).catch((e) => { fs.writeFileSync(${JSON.stringify(refused)}, ''); throw e; }) })(); 'returned'`,
      );
      expect(r.value).toBe("returned");
      await writeFile(go, "");
      const between = await runUntilFile(session, refused);
      expect(probe.contexts.length).toBe(before);
      // The refused call rejected the floating promise: the agent hears of it with the next run.
      const next = await session.run("1");
      expect(`${r.stderr}${between}${next.stderr}`).toMatch(/Unhandled promise rejection: RunEndedError: tools\.call: the run that made this call has ended/);
    });

    it("a tool call still in flight when the run returns is aborted", async () => {
      const aborted = probe.aborted;
      expect(await value("void tools.probe.sleep({ ms: 5000 }).catch(() => {}); await new Promise((r) => setTimeout(r, 50)); 'returned'")).toBe("returned");
      await sleep(100);
      expect(probe.aborted).toBe(aborted + 1);
    });

    it("timers inside a run still work, and top-level state they change is kept", async () => {
      expect(await value("var laterValue = 0; setTimeout(() => { laterValue = 7 }, 5); await new Promise((r) => setTimeout(r, 40)); laterValue")).toBe(7);
      expect(await value("laterValue")).toBe(7);
    });
  });
}

describe("SubprocessExecutor: the host refuses calls the child sends outside a run", () => {
  it("a call forged with process.send right behind the run's result never reaches a tool", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-run-ends-"));
    const probe = new ProbeAdapter();
    const tools = new ToolRegistry();
    tools.register(probe);
    const session = new Session({ storage: new FileStorage({ basePath: dir }), executor: new SubprocessExecutor({ tools }) });
    try {
      // The forged message follows the run's result at once, on the same channel: the host has
      // read the result, and ended the run for calls, when it reads the forged one. The child
      // writes a file once both are written. On a loaded machine the host may freeze the child
      // between the two writes (it freezes an idle child one turn after a result): the forged
      // message then goes out when a later run thaws it, inside that run, where the host cannot
      // tell it from the run's own calls. Such a trial proves nothing and is repeated.
      let proven = 0;
      for (let trial = 0; trial < 5 && proven < 2; trial++) {
        const sent = path.join(dir, `forge-sent-${trial}`);
        const before = probe.contexts.length;
        const r = await session.run(
          `const fs = require('node:fs'); const send = process.send.bind(process); process.send = (message, ...rest) => { const out = send(message, ...rest); if (message && message.type === 'result') { process.send = send; send({ type: 'call', callId: 1e9, ns: 'tools', op: 'call', args: ['probe', 'echo', { value: 'forged' }] }); fs.writeFileSync(${JSON.stringify(sent)}, ''); } return out; }; 'returned'`,
        );
        expect(r.value).toBe("returned");
        if (await fileWithin(sent, 2_000)) {
          // Both messages were written before the file: one more turn of this event loop reads them.
          await sleep(50);
          expect(probe.contexts.length).toBe(before);
          proven++;
        } else {
          await runUntilFile(session, sent);
        }
      }
      expect(proven).toBeGreaterThan(0);
      expect((await session.run("1 + 1")).value).toBe(2);
    } finally {
      await session.close();
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    }
  });
});
