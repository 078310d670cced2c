/**
 * Limits the sandbox promises against hostile guest code (issue 13), for both engines where they
 * apply: the deno engine has no ambient authority (no remote/npm/jsr imports, no storage), guest
 * code never outlives its run (nothing executes or calls the host after the result, forged
 * protocol frames are refused), nothing the guest controls accumulates (QuickJS memory after large
 * console output, console label maps), and the host renders any value in bounded time.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { SandboxExecutor, type SandboxExecutorOptions } from "../../src/execution/sandbox/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { ProbeAdapter } from "../helpers/adapters.js";
import { waitFor } from "../helpers/processes.js";
import { ensureBuilt, REPO } from "../cli/harness.js";
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The process state letter from /proc (T: stopped), or null when it is gone. */
function procState(pid: number): string | null {
  try {
    return /^\d+ \(.*\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, "utf8"))?.[1] ?? null;
  } catch {
    return null;
  }
}

for (const engine of ["quickjs", "deno"] as const) {
  describe(`SandboxExecutor hardening (${engine})`, () => {
    let dir: string;
    let probe: ProbeAdapter;
    let executor: SandboxExecutor;
    const sessions: Session[] = [];

    async function open(options: SandboxExecutorOptions = {}): Promise<Session> {
      probe = new ProbeAdapter();
      const tools = new ToolRegistry();
      tools.register(probe);
      executor = new SandboxExecutor({ engine, defaultTimeoutMs: 10_000, tools, ...options });
      const session = new Session({ storage: new FileStorage({ basePath: dir }), executor });
      sessions.push(session);
      await session.start();
      return session;
    }

    beforeEach(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), "tcm-sandbox-hardening-"));
    });

    afterEach(async () => {
      await Promise.all(sessions.splice(0).map((s) => s.close()));
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    });

    describe("guest code never outlives its run", () => {
      it("work scheduled to call the host after the result makes no host call after it", async () => {
        const s = await open();
        const code =
          engine === "deno"
            ? `const mc = new MessageChannel(); let n = 0;
               mc.port1.onmessage = () => { if (++n % 20 === 0) tools.probe.echo({ value: "message" }).catch(() => {}); mc.port2.postMessage(0) };
               mc.port2.postMessage(0);
               const timers: any = await (0, eval)("import('node:timers')");
               timers.setInterval(() => tools.probe.echo({ value: "node:timers" }).catch(() => {}), 5);
               AbortSignal.timeout(30).addEventListener("abort", () => tools.probe.echo({ value: "abort" }).catch(() => {}));
               setTimeout(() => tools.probe.echo({ value: "timer" }), 30);
               "scheduled"`
            : `(async () => { for (let i = 0; ; i++) { await null; if (i % 1000 === 0) tools.probe.echo({ value: i }).catch(() => {}) } })();
               setTimeout(() => tools.probe.echo({ value: "timer" }), 30);
               "scheduled"`;
        const ranIn = executor.processId;
        const r = await s.run(code);
        expect(r.error).toBeNull();
        expect(r.value).toBe("scheduled");
        const atResult = probe.contexts.length;
        await sleep(400);
        expect(probe.contexts.length).toBe(atResult);
        if (engine === "deno" && process.platform === "linux") {
          expect(ranIn).toBeTypeOf("number");
          // The guest has STOP_GRACE_MS to confirm it dropped its work; on a loaded machine it may
          // miss that, and then its process is ended (the result says so) instead of frozen.
          if (r.stderr.includes("the sandbox process was restarted")) await waitFor(() => [null, "Z"].includes(procState(ranIn as number)), "the deno process that missed its grace to be gone", 30_000);
          // The freeze follows the result (it is not part of it): on a loaded machine it may land after 400 ms.
          else await waitFor(() => procState(executor.processId as number) === "T", "the deno process to be frozen (T) between runs", 30_000);
        }
        // The session goes on working.
        expect((await s.run("await tools.probe.echo({ value: 5 })")).value).toBe(5);
      });

      it("a reply arriving after the result runs no guest code (a getter on Object.prototype.then) and so calls nothing", async () => {
        const s = await open();
        const r = await s.run(`Object.defineProperty(Object.prototype, "then", { configurable: true, get() { tools.probe.echo({ value: "from a getter" }).catch(() => {}); return undefined } });
          tools.probe.sleep({ ms: 50 }).then(() => {}); globalThis.late = tools.probe.echo({ value: { late: true } }); "started"`);
        expect(r.value).toBe("started");
        const atResult = probe.contexts.length;
        await sleep(400);
        expect(probe.contexts.length).toBe(atResult);
      });

      it("a promise loop left running after the result never reaches the host, and the session recovers", async () => {
        const s = await open();
        await s.run("var keptBefore = 1");
        const r = await s.run(`(async () => { for (let i = 0; ; i++) { await null; if (i % 100000 === 0) tools.probe.echo({ value: i }).catch(() => {}) } })(); "left"`);
        expect(r.value).toBe("left");
        const atResult = probe.contexts.length;
        await sleep(400);
        expect(probe.contexts.length).toBe(atResult);
        if (engine === "deno") expect(r.stderr).toMatch(/kept running after its result.*restarted/);
        expect((await s.run("1 + 1", { timeoutMs: 5_000 })).value).toBe(2);
      });

      if (engine === "deno") {
        it("a worker forging 'stopped' frames on stdout does not make the host believe a busy loop stopped", async () => {
          const s = await open();
          await s.run("var beforeForgery = 1");
          const pid = executor.processId as number;
          const forger = `
            const enc = new TextEncoder();
            const frame = (h) => { const head = enc.encode(JSON.stringify(h)); const f = new Uint8Array(12 + head.length); const v = new DataView(f.buffer);
              v.setUint32(0, 0x314d4354, true); v.setUint32(4, 4 + head.length, true); v.setUint32(8, head.length, true); f.set(head, 12); return f; };
            setInterval(() => { for (let seq = 1; seq < 20; seq++) Deno.stdout.writeSync(frame({ t: "stopped", seq, b: [] })); }, 10);`;
          const r = await s.run(
            `new Worker(URL.createObjectURL(new Blob([${JSON.stringify(forger)}], { type: "text/javascript" })), { type: "module" }); const until = Date.now() + 100; while (Date.now() < until) {} for (;;) {}`,
            { timeoutMs: 500 },
          );
          expect(r.ok).toBe(false);
          expect(r.error?.message).not.toMatch(/variables are kept/);
          expect(r.error?.message).toMatch(/lost|restarted/);
          expect(isAlive(pid)).toBe(false);
          expect((await s.run("typeof beforeForgery", { timeoutMs: 5_000 })).value).toBe("undefined");
        });
      }
    });

    describe("nothing guest-controlled accumulates", () => {
      it("60 × 1 MiB of console output (most of the 96 MB cap) leaves room for the next identical run", async () => {
        // Two runs' output (120 MiB) is more than the cap: kept output would fail the second run. A
        // smaller cap than the default 256 MB keeps that proof and writes a third of the bytes
        // (the 200 MiB × 2 version took 45-60 s per engine on a loaded 2-core machine).
        const s = await open({ memoryMb: 96 });
        const code = `for (let i = 0; i < 60; i++) console.log("x".repeat(1 << 20)); "done"`;
        for (let i = 0; i < 2; i++) {
          const r = await s.run(code, { timeoutMs: 60_000 });
          expect(r.error, `run ${i + 1}`).toBeNull();
          expect(r.value).toBe("done");
          expect(r.stdout).toMatch(/output limit/);
        }
      }, 120_000);

      it("console.count/time labels are bounded in number and size (the oldest forgotten), and cleared by reset()", async () => {
        const s = await open();
        const r = await s.run(`for (let i = 0; i < 1500; i++) { console.count("label-" + i); console.time("t-" + i) } console.count("z".repeat(100000)); console.timeEnd("t-0"); console.timeEnd("t-1499"); "ok"`);
        expect(r.value).toBe("ok");
        const lines = r.stdout.trimEnd().split("\n");
        expect(lines.at(-2)).toMatch(/^z{1000}…: 1$/);
        // t-0 was forgotten (timeEnd prints nothing for it); t-1499 is still there.
        expect(lines.at(-1)).toMatch(/^t-1499: [\d.]+ms$/);
        // label-0 was forgotten, label-1499 is still counted.
        expect((await s.run(`console.count("label-0"); console.count("label-1499"); 0`)).stdout).toBe("label-0: 1\nlabel-1499: 2\n");
        await s.reset();
        expect((await s.run(`console.count("label-1499"); 0`)).stdout).toBe("label-1499: 1\n");
      });

    });

    describe("the host renders any value in bounded time and memory", () => {
      const WIDE = `let o: any = 1; for (let d = 0; d < 7; d++) { const n: any = {}; for (let k = 0; k < 60; k++) n["k" + k] = o; o = n } o`;
      const DAG = `let a: any = [1]; for (let i = 0; i < 40; i++) a = [a, a]; a`;
      // One session for the three values (a top-level `let` may be declared again in a later run):
      // what is rendered is the value, not the session's history, and a deno start is seconds under load.
      let shared: { session: Session; dir: string } | undefined;
      const session = async (): Promise<Session> => {
        if (!shared) {
          // Not open(): its session and folder last one test.
          const sharedDir = await mkdtemp(path.join(os.tmpdir(), "tcm-sandbox-render-"));
          const s = new Session({ storage: new FileStorage({ basePath: sharedDir }), executor: new SandboxExecutor({ engine, defaultTimeoutMs: 10_000 }) });
          shared = { session: s, dir: sharedDir };
          await s.start();
        }
        return shared.session;
      };
      afterAll(async () => {
        await shared?.session.close();
        if (shared) await rm(shared.dir, { recursive: true, force: true, maxRetries: 5 });
      });

      it("a value 7 levels deep with 60 keys per level: displayed, with a note of what was cut", async () => {
        const s = await session();
        const r = await s.run(WIDE);
        expect(r.error).toBeNull();
        expect(r.display).toMatch(/display limit: \d+ entries of the value \(with everything inside them\) not shown/);
        expect(r.display.length).toBeLessThan(200_000);
      }, 60_000);

      it("the same value through console.log and console.dir, and thrown", async () => {
        const s = await session();
        const r = await s.run(`${WIDE.replace(/ o$/, "")}; console.log(o); console.dir(o); "logged"`);
        expect(r.value).toBe("logged");
        expect(r.stdout).toMatch(/not shown/);
        const thrown = await s.run(`${WIDE.replace(/ o$/, "")}; throw o`);
        expect(thrown.error?.message).toMatch(/^Uncaught/);
      }, 60_000);

      it("a DAG of 2^40 paths built from 41 arrays", async () => {
        const s = await session();
        const r = await s.run(DAG);
        expect(r.error).toBeNull();
        expect(r.display.length).toBeGreaterThan(0);
        const logged = await s.run(`${DAG}; console.dir(a); 1`);
        expect(logged.value).toBe(1);
      }, 60_000);
    });
  });
}

describe.runIf(process.platform === "linux")("SandboxExecutor (deno): a frozen process dies with its host", () => {
  it("the host is SIGKILLed while its deno process is frozen between runs: the deno process ends too", async () => {
    await ensureBuilt();
    const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-sandbox-host-death-"));
    try {
      const script = path.join(dir, "host.mjs");
      await writeFile(
        script,
        `const { SandboxExecutor, FileStorage } = await import(${JSON.stringify(path.join(REPO, "dist/index.js"))});
         const ex = new SandboxExecutor({ engine: "deno" });
         await ex.start(new FileStorage({ basePath: ${JSON.stringify(path.join(dir, "store"))} }));
         // The guest ignores SIGHUP, so only a parent-death signal can end it.
         const r = await ex.run('Deno.addSignalListener("SIGHUP", () => {}); "ran"');
         process.stdout.write(JSON.stringify({ value: r.value, pid: ex.processId }) + "\\n");
         setInterval(() => {}, 1000);`,
      );
      const host = spawn(process.execPath, [script], { stdio: ["ignore", "pipe", "inherit"] });
      const line = await new Promise<string>((resolve, reject) => {
        let out = "";
        host.stdout.on("data", (c: Buffer) => {
          out += c.toString();
          if (out.includes("\n")) resolve(out);
        });
        host.on("exit", () => reject(new Error(`host exited early: ${out}`)));
      });
      const { value, pid } = JSON.parse(line) as { value: string; pid: number };
      expect(value).toBe("ran");
      // SIGSTOP takes effect when the kernel next schedules the process: on a loaded machine it
      // was still R when the host printed (a CI flake). Frozen within 10 s, or the test fails.
      await waitFor(() => procState(pid) === "T", `deno process ${pid} to be stopped (state T)`, 10_000);
      host.kill("SIGKILL");
      const until = Date.now() + 10_000;
      // Gone, or a zombie (dead, waiting to be reaped by whoever adopted it).
      while (isAlive(pid) && procState(pid) !== "Z" && Date.now() < until) await sleep(20);
      expect(isAlive(pid) && procState(pid) !== "Z").toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    }
  }, 120_000);
});

describe("SandboxExecutor (deno): no ambient authority", () => {
  let dir: string;
  let server: Server;
  let requests = 0;
  let port = 0;
  const sessions: Session[] = [];

  async function open(): Promise<Session> {
    const session = new Session({ storage: new FileStorage({ basePath: dir }), executor: new SandboxExecutor({ engine: "deno", defaultTimeoutMs: 20_000 }) });
    sessions.push(session);
    await session.start();
    return session;
  }

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-sandbox-authority-"));
    requests = 0;
    server = createServer((_req, res) => {
      requests++;
      res.writeHead(200, { "content-type": "application/javascript" });
      res.end("export default 'fetched from the network'");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  /**
   * The import probes share one session (a deno start is seconds on a loaded machine): each probe
   * is refused by the process's flags, whatever ran before it (a later run may declare the same
   * top-level names again). The web-storage test, which resets, has a session of its own.
   */
  let importer: { session: Session; dir: string } | undefined;
  async function importSession(): Promise<Session> {
    if (!importer) {
      const importerDir = await mkdtemp(path.join(os.tmpdir(), "tcm-sandbox-imports-"));
      const session = new Session({ storage: new FileStorage({ basePath: importerDir }), executor: new SandboxExecutor({ engine: "deno", defaultTimeoutMs: 20_000 }) });
      importer = { session, dir: importerDir };
      await session.start();
    }
    return importer.session;
  }
  afterAll(async () => {
    await importer?.session.close();
    if (importer) await rm(importer.dir, { recursive: true, force: true, maxRetries: 5 });
  });

  /** Imports `spec` through indirect eval, new Function, a data: module and a worker; reports each outcome. */
  const importEverywhere = (spec: string) => `
    const spec = ${JSON.stringify(spec)};
    const out: string[] = [];
    const tryImport = async (how: string, load: () => Promise<any>) => {
      try { const m = await load(); out.push(how + ": LOADED " + String(m.default)) } catch (e: any) { out.push(how + ": " + String(e?.message).split("\\n")[0]) }
    };
    await tryImport("eval", () => (0, eval)("import(" + JSON.stringify(spec) + ")"));
    await tryImport("Function", () => new Function("s", "return import(s)")(spec));
    await tryImport("data:", () => (0, eval)("import('data:text/javascript,' + encodeURIComponent('export { default } from ' + JSON.stringify(spec)))"));
    out.push("worker: " + await new Promise((resolve) => {
      const src = "import(" + JSON.stringify(spec) + ").then((m) => postMessage('LOADED ' + m.default), (e) => postMessage(String(e.message).split('\\\\n')[0]))";
      const w = new Worker(URL.createObjectURL(new Blob([src], { type: "text/javascript" })), { type: "module" });
      w.onmessage = (e) => { resolve(e.data); w.terminate() };
      w.onerror = (e) => { e.preventDefault(); resolve("error " + e.message); w.terminate() };
    }));
    out.join("\\n")`;

  it("a module on a local HTTP server is refused from eval, new Function, a data: module and a worker; the server sees no request", async () => {
    const s = await importSession();
    const r = await s.run(importEverywhere(`http://127.0.0.1:${port}/m.js`));
    expect(r.error, JSON.stringify(r.error)).toBeNull();
    expect(r.value).not.toMatch(/LOADED/);
    expect(String(r.value).split("\n")).toHaveLength(4);
    for (const line of String(r.value).split("\n")) expect(line).toMatch(/Requires import access|--no-remote|cached-only/);
    expect(requests).toBe(0);
  });

  it.each([
    ["npm:", "npm:left-pad@1.3.0", /--no-npm/],
    ["jsr:", "jsr:@std/path@1", /Requires import access|--no-remote|cached-only/],
    ["https: on Deno's default allow-list", "https://deno.land/std@0.224.0/path/mod.ts", /Requires import access|--no-remote|cached-only/],
    ["esm.sh", "https://esm.sh/left-pad@1.3.0", /Requires import access|--no-remote|cached-only/],
  ])("%s imports are refused by policy, before any request", async (_what, spec, refusal) => {
    const s = await importSession();
    const r = await s.run(importEverywhere(spec));
    expect(r.error, JSON.stringify(r.error)).toBeNull();
    const lines = String(r.value).split("\n");
    expect(lines).toHaveLength(4);
    for (const line of lines) {
      expect(line).not.toMatch(/LOADED/);
      expect(line).toMatch(refusal);
    }
  });

  it("web storage is absent and the Cache API, reached from a Node-compat worker thread, cannot write; nothing survives reset()", async () => {
    const s = await open();
    const r = await s.run(`
      const wt: any = await (0, eval)("import('node:worker_threads')");
      const fromWorker = await new Promise((resolve) => {
        const w = new wt.Worker("const { parentPort } = require('node:worker_threads'); (async () => { try { const c = await caches.open('x'); await c.put('http://a/', new Response('x'.repeat(1000))); parentPort.postMessage('STORED') } catch (e) { parentPort.postMessage('refused: ' + e.message) } })()", { eval: true });
        w.on("message", (m: string) => { resolve(m); w.terminate() });
        w.on("error", (e: Error) => resolve("error " + e.message));
      });
      [typeof localStorage, typeof sessionStorage, typeof caches, fromWorker].join(",")`);
    expect(r.error, JSON.stringify(r.error)).toBeNull();
    const [ls, ss, cs, worker] = String(r.value).split(",");
    expect([ls, ss, cs]).toEqual(["undefined", "undefined", "undefined"]);
    expect(worker).toMatch(/^refused/);
    await s.reset();
    const after = await s.run(`typeof localStorage`);
    expect(after.value).toBe("undefined");
  });
});
