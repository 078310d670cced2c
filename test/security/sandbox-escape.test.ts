/**
 * Escape corpus for SandboxExecutor: each attempt tries to obtain one specific capability from
 * inside the sandbox (the host's `process`, `require`, files, the host's prototypes, host objects
 * or functions, unbounded resources) and asserts that exactly that capability was NOT obtained.
 * After every attempt the attacked session, a second sandbox session open at the same time, and
 * the host process itself must still work, and the host's globals and builtin prototypes must be
 * exactly as before.
 */
import { existsSync, realpathSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { types } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SandboxExecutor } from "../../src/execution/sandbox/executor.js";
import type { ExecutionResult } from "../../src/execution/protocol.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import type { CallContext, ToolAdapter, ToolInfo } from "../../src/tools/protocol.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { ProbeAdapter } from "../helpers/adapters.js";

/** `recorder.keep({ value })` stores what the host received and returns "kept". */
class RecorderAdapter implements ToolAdapter {
  readonly name = "recorder";
  readonly received: unknown[] = [];

  async info(): Promise<ToolInfo> {
    return {
      name: "recorder",
      type: "toolable",
      description: "Test: records the arguments the host received",
      tags: ["test"],
      direct: null,
      callables: [{ name: "keep", description: "Record value", params: [{ name: "value", type: "unknown", required: true }], returns: "string" }],
    };
  }

  async call(_callable: string | null, args: Record<string, unknown>, _ctx: CallContext): Promise<unknown> {
    this.received.push(args["value"]);
    return "kept";
  }

  async close(): Promise<void> {}
}

interface Attempt {
  /** What is being tried. */
  name: string;
  code: string | ((marker: string) => string);
  timeoutMs?: number;
  /** Asserts that the specific capability was not obtained. */
  check(r: ExecutionResult, ctx: { recorder: RecorderAdapter; probe: ProbeAdapter; marker: string }): void | Promise<void>;
  /**
   * The deno engine runs real V8 with Deno's globals (`Deno`, Node-compat `process`), present but
   * without permissions. For attempts that read "not escaped" as "the object is absent", deno is
   * checked for the capability itself: "authority" runs DENO_AUTHORITY_PROBE in the attacked
   * session and requires every access to be denied. A function replaces `check` for deno.
   */
  deno?: "authority" | ((r: ExecutionResult) => void);
}

/** Inside a deno sandbox: each way to reach the machine, which must all be denied. */
const DENO_AUTHORITY_PROBE = `
  const out: string[] = [];
  const g: any = globalThis;
  const tries: Array<() => unknown> = [
    () => g.Deno.readTextFileSync("/etc/hostname"),
    () => g.Deno.writeTextFileSync("/tmp/tcm-deno-authority-probe", "x"),
    () => g.Deno.env.get("HOME"),
    () => g.process?.env?.HOME,
    () => new g.Deno.Command("/bin/true").outputSync(),
  ];
  // Only Deno's own refusal counts: "Deno is not defined" or any other error would be a broken probe.
  const refused = (e: any) => (e?.name === "NotCapable" || e?.name === "PermissionDenied" ? "denied" : "error " + e?.name + ": " + e?.message);
  for (const t of tries) { try { out.push(t() === undefined ? "undefined" : "GOT") } catch (e) { out.push(refused(e)) } }
  out.push(await fetch("http://127.0.0.1:34567/").then(() => "GOT", refused));
  out.join(",")`;
const ALL_DENIED = "denied,denied,denied,denied,denied,denied";

/** The result's value, which must be a string (the attempt reports what it got). */
const str = (r: ExecutionResult): string => {
  expect(r.error, JSON.stringify(r.error)).toBeNull();
  expect(typeof r.value).toBe("string");
  return r.value as string;
};

const NOT_REACHED = ["process", "require", "module", "Buffer", "fetch", "WebAssembly", "SharedArrayBuffer", "Atomics", "__tcm_host", "std", "os", "print", "scriptArgs"];

/** Reports, as one string, what `expr` (evaluated inside the sandbox) gives for host-only names. */
const probeScope = (getGlobal: string) =>
  `const g: any = ${getGlobal}; ${JSON.stringify(NOT_REACHED)}.map((k) => k + "=" + typeof g[k]).join(",")`;
const ALL_UNDEFINED = NOT_REACHED.map((k) => `${k}=undefined`).join(",");

const ATTEMPTS: Attempt[] = [
  // ---- constructor chains to the host's Function --------------------------------------------
  {
    name: "this.constructor.constructor('return process')()",
    deno: "authority",
    code: `let got = "nothing"; try { const p: any = this.constructor.constructor("return process")(); got = typeof p } catch (e: any) { got = "blocked: " + e.name } got`,
    check: (r) => expect(str(r)).toBe("blocked: ReferenceError"),
  },
  {
    name: "globalThis via the Function constructor has no host globals",
    deno: "authority",
    code: probeScope(`Function("return this")()`),
    check: (r) => expect(str(r)).toBe(ALL_UNDEFINED),
  },
  {
    name: "constructor chain through an Error",
    deno: "authority",
    code: probeScope(`new Error("x").constructor.constructor("return globalThis")()`),
    check: (r) => expect(str(r)).toBe(ALL_UNDEFINED),
  },
  {
    name: "constructor chain through a Promise",
    deno: "authority",
    code: probeScope(`Promise.resolve(1).constructor.constructor("return this")()`),
    check: (r) => expect(str(r)).toBe(ALL_UNDEFINED),
  },
  {
    name: "constructor chain through a namespace function (tools.list.constructor)",
    deno: "authority",
    code: `[tools.list.constructor === Function, tools.list.constructor("return typeof process + typeof require")()].join(" ")`,
    check: (r) => expect(str(r)).toBe("true undefinedundefined"),
  },
  {
    name: "constructor chain through the Proxies the namespaces return",
    deno: "authority",
    code: `[typeof tools.echo.constructor, typeof workflows.constructor, Object.getPrototypeOf(tools.echo).constructor("return typeof process")(),
        tools.echo.say.constructor("return typeof require")(), Reflect.getPrototypeOf(workflows.list)!.constructor("return typeof process")()].join(" ")`,
    check: (r) => expect(str(r)).toBe("undefined undefined undefined undefined undefined"),
  },
  {
    name: "constructor chain through values returned by host calls",
    deno: "authority",
    code: `const listed: any = await tools.list(); const got: any = await artifacts.exists("none");
        [listed.constructor.constructor("return typeof process")(), listed[0].constructor.constructor("return typeof require")(),
         (listed instanceof Array) && Object.getPrototypeOf(listed) === Array.prototype, typeof got].join(" ")`,
    check: (r) => expect(str(r)).toBe("undefined undefined true boolean"),
  },
  {
    name: "constructor chain through an error raised on the host",
    deno: "authority",
    code: `let via = "none"; try { await tools.nope.run({}) } catch (e: any) { via = [e instanceof Error, e.constructor.constructor("return typeof process")(), /node:|\\/src\\//.test(String(e.stack))].join(" ") } via`,
    check: (r) => expect(str(r)).toBe("true undefined false"),
  },
  {
    name: "the sandbox's global object holds JavaScript builtins and our names only",
    deno: "authority",
    code: `Object.getOwnPropertyNames(globalThis).filter((k) => !/^[A-Z]/.test(k)).sort().join(",")`,
    check: (r) =>
      expect(str(r).split(",")).toEqual(
        [
          "__tcm_import", "agents", "artifacts", "clearInterval", "clearTimeout", "console", "decodeURI", "decodeURIComponent", "deps", "encodeURI",
          "encodeURIComponent", "escape", "eval", "global", "globalThis", "isFinite", "isNaN", "parseFloat", "parseInt", "queueMicrotask",
          "setInterval", "setTimeout", "skills", "structuredClone", "tools", "undefined", "unescape", "workflows",
        ].sort(),
      ),
  },
  {
    name: "eval and indirect eval stay inside the sandbox",
    deno: "authority",
    code: `[eval("typeof process"), (0, eval)("typeof require"), new Function("return typeof module")()].join(" ")`,
    check: (r) => expect(str(r)).toBe("undefined undefined undefined"),
  },
  {
    name: "arguments.callee.caller from a timer callback does not reach the runtime",
    code: `let callerType = "unset"; setTimeout(function () { try { callerType = typeof (arguments as any).callee.caller } catch (e: any) { callerType = "threw " + e.name } }, 1);
        await new Promise((r) => setTimeout(r, 10)); callerType`,
    check: (r) => expect(str(r)).toMatch(/^(undefined|object|threw TypeError)$/),
  },
  // ---- files, modules, processes ---------------------------------------------------------------
  {
    name: "writing a file through process.mainModule.require",
    deno: "authority",
    code: (marker) =>
      `let how = "nothing"; try { (Function("return process")() as any).mainModule.require("fs").writeFileSync(${JSON.stringify(marker)}, "x"); how = "wrote" } catch (e: any) { how = "blocked: " + e.name } how`,
    check: (r, { marker }) => {
      expect(str(r)).toBe("blocked: ReferenceError");
      expect(existsSync(marker)).toBe(false);
    },
  },
  {
    name: "static import of a Node builtin",
    code: `import cp from "node:child_process"; cp`,
    check: (r) => {
      expect(r.ok).toBe(false);
      expect(r.error?.message).toMatch(/not available in the sandbox/);
    },
  },
  {
    name: "dynamic import() of a Node builtin and of a relative file",
    code: `const out: string[] = []; for (const s of ["fs", "node:fs/promises", "../../../etc/passwd"]) { try { await import(s); out.push("loaded") } catch (e: any) { out.push("blocked") } } out.join(" ")`,
    check: (r) => expect(str(r)).toBe("blocked blocked blocked"),
  },
  {
    name: "calling the import hook directly",
    code: `let how = "loaded"; try { await (globalThis as any).__tcm_import("child_process") } catch (e: any) { how = e.message } how`,
    check: (r) => expect(str(r)).toMatch(/not available in the sandbox/),
  },
  {
    name: "require of a Node builtin inside a workflow",
    code: `await workflows.create({ name: "esc_require", source: "export async function run() { return typeof require('child_process').execSync }" });
        let how = "ran"; try { await workflows.esc_require({}) } catch (e: any) { how = e.message } how`,
    check: (r) => expect(str(r)).toMatch(/require\("child_process"\) is not available in the sandbox/),
  },
  {
    name: "WebAssembly, SharedArrayBuffer and Atomics are absent",
    code: `[typeof WebAssembly, typeof SharedArrayBuffer, typeof Atomics, typeof (globalThis as any).WebAssembly].join(" ")`,
    check: (r) => expect(str(r)).toBe("undefined undefined undefined undefined"),
  },
  // ---- prototype pollution ---------------------------------------------------------------------
  {
    name: "pollution through an RPC payload with a __proto__ key",
    code: `let how = "sent"; try { await tools.recorder.keep({ value: JSON.parse('{"__proto__": {"pollutedA": true}}') }) } catch (e: any) { how = e.name + ": " + e.message } how`,
    check: (r, { recorder }) => {
      expect(str(r)).toMatch(/^ValidationError: tools\.call: .*"__proto__" is not allowed/);
      expect(recorder.received).toEqual([]);
    },
  },
  {
    name: "pollution through constructor.prototype in an RPC payload",
    code: `let how = "sent"; try { await tools.recorder.keep({ value: { constructor: { prototype: { pollutedB: true } } } }) } catch (e: any) { how = e.name } how`,
    check: (r, { recorder }) => {
      expect(str(r)).toBe("ValidationError");
      expect(recorder.received).toEqual([]);
    },
  },
  {
    name: "pollution through an artifact and a workflow definition",
    code: `const out: string[] = [];
        try { await artifacts.save("p.json", JSON.parse('{"__proto__": {"pollutedC": 1}}')); out.push("saved") } catch (e: any) { out.push(e.name) }
        try { await workflows.create(JSON.parse('{"name": "pw", "source": "export async function run() {}", "__proto__": {"pollutedD": 1}}')); out.push("created") } catch (e: any) { out.push(e.name) }
        out.join(" ")`,
    check: (r) => expect(str(r)).toBe("ValidationError ValidationError"),
  },
  {
    name: "pollution through the run's returned value",
    code: `JSON.parse('{"__proto__": {"pollutedE": true}, "constructor": {"prototype": {"pollutedF": true}}}')`,
    check: (r) => {
      expect(r.ok).toBe(true);
      expect(r.value).toBeUndefined();
      expect(r.display).toMatch(/not allowed/);
    },
  },
  {
    name: "pollution through a value thrown out of the run",
    code: `throw JSON.parse('{"message": "m", "__proto__": {"pollutedG": true}}')`,
    check: (r) => {
      expect(r.ok).toBe(false);
      expect(typeof r.error?.message).toBe("string");
    },
  },
  // ---- code that must never run on the host ------------------------------------------------------
  {
    name: "a getter on a value handed to the host runs in the guest only",
    code: `let getterRuns = 0; const o = { get x() { getterRuns++; return 1 } }; await tools.recorder.keep({ value: o }); String(getterRuns)`,
    check: (r, { recorder }) => {
      expect(str(r)).toBe("1");
      const got = recorder.received[0] as object;
      expect(Object.getOwnPropertyDescriptor(got, "x")).toEqual({ value: 1, writable: true, enumerable: true, configurable: true });
    },
  },
  {
    name: "a Proxy handed to the host reaches it as plain data",
    code: `let traps = 0; const p = new Proxy({ a: 1 }, { get(t, k) { traps++; return Reflect.get(t, k) }, ownKeys(t) { traps++; return Reflect.ownKeys(t) } });
        await tools.recorder.keep({ value: p }); String(traps > 0)`,
    check: (r, { recorder }) => {
      expect(str(r)).toBe("true");
      expect(types.isProxy(recorder.received[0])).toBe(false);
      expect(recorder.received[0]).toEqual({ a: 1 });
    },
  },
  {
    name: "toJSON and Symbol.toPrimitive on values handed to the host",
    code: `const out: string[] = [];
        try { await tools.recorder.keep({ value: { toJSON() { return "hijacked" } } }); out.push("sent") } catch (e: any) { out.push(e.name) }
        await tools.recorder.keep({ value: { [Symbol.toPrimitive]() { return "hijacked" }, plain: 1 } }); out.push("sent");
        out.join(" ")`,
    check: (r, { recorder }) => {
      expect(str(r)).toBe("ValidationError sent");
      expect(recorder.received).toEqual([{ plain: 1 }]);
      expect(String(recorder.received[0])).toBe("[object Object]");
    },
  },
  {
    name: "a util.inspect hook on the returned value does not run on the host",
    code: `({ [Symbol.for("nodejs.util.inspect.custom")]: () => "hijacked", inspect: () => "hijacked", shown: 1 })`,
    check: (r) => {
      expect(r.display).not.toMatch(/^hijacked$/);
      expect(r.display).toMatch(/shown: 1/);
      expect(r.value).toBeUndefined();
    },
  },
  {
    name: "a thrown object with an endless getter stays the guest's problem",
    code: `throw { get message(): string { for (;;) {} } }`,
    timeoutMs: 300,
    check: (r) => {
      expect(r.ok).toBe(false);
      expect(r.error?.name).toBe("TimeoutError");
    },
  },
  // ---- hostile sizes and shapes ----------------------------------------------------------------
  {
    name: "cyclic arguments reach the host as a copy",
    code: `const c: any = { n: 1 }; c.self = c; await tools.recorder.keep({ value: c })`,
    check: (r, { recorder }) => {
      expect(r.error).toBeNull();
      const got = recorder.received[0] as { self: unknown };
      expect(got.self).toBe(got);
    },
  },
  {
    name: "10^5-deep nested arguments are refused",
    code: `let d: any = 1; for (let i = 0; i < 1e5; i++) d = [d]; let how = "sent"; try { await tools.recorder.keep({ value: d }) } catch (e: any) { how = e.message } how`,
    check: (r, { recorder }) => {
      expect(str(r)).toMatch(/nested more than 200 levels/);
      expect(recorder.received).toEqual([]);
    },
  },
  {
    name: "100 MB of arguments are refused",
    code: `const huge = "x".repeat(100 * 1024 * 1024); let how = "sent"; try { await tools.recorder.keep({ value: huge }) } catch (e: any) { how = e.message } how`,
    check: (r, { recorder }) => {
      expect(str(r)).toMatch(/larger than 64 MB/);
      expect(recorder.received).toEqual([]);
    },
  },
  {
    name: "a workflow that invokes itself without end",
    code: `await workflows.create({ name: "forever", source: "export async function run() { return workflows.forever({}) }" }); await workflows.forever({})`,
    timeoutMs: 10_000,
    check: (r) => {
      expect(r.ok).toBe(false);
      expect(r.error?.name).toMatch(/RangeError|TimeoutError/);
    },
  },
  {
    name: "thousands of calls started without awaiting",
    // deno: the host answers all 12,000 (the engine has no pending-call cap); the host and the
    // bystander must keep working, which the loop checks after every attempt.
    deno: (r) => expect(["true", "false"]).toContain(str(r)),
    code: `const ps: Promise<unknown>[] = []; for (let i = 0; i < 12000; i++) ps.push(artifacts.exists("x" + i).catch((e) => e.message));
        const settled = await Promise.all(ps); String(settled.filter((v) => typeof v === "string" && /pending/.test(v as string)).length > 0)`,
    // 12,000 calls: 9-12 s in a loaded CI run, 22 s with the machine 8× oversubscribed.
    timeoutMs: 90_000,
    check: (r) => expect(str(r)).toBe("true"),
  },
  {
    name: "a flood of timers",
    code: `let made = 0; try { for (let i = 0; i < 100000; i++) { setTimeout(() => {}, 1e9); made++ } } catch (e: any) { } String(made)`,
    check: (r) => expect(Number(str(r))).toBeLessThanOrEqual(1000),
  },
  {
    name: "stack overflow",
    code: `function down(): number { return down() + 1 } down()`,
    check: (r) => {
      expect(r.error?.name).toBe("RangeError");
    },
  },
  {
    name: "host code called at the bottom of the deepest possible recursion",
    code: `let max = 0; function probe(n: number): number { max = n; return probe(n + 1) + 1 } try { probe(0) } catch {}
        function dive(n: number): number { if (n <= 0) { console.log({ bottom: [1, 2, 3], map: new Map([[1, 2]]) }); tools.recorder.keep({ value: "deep" }); return 0 } return dive(n - 1) + 1 }
        let outcome = "returned"; try { dive(max - 3) } catch (e: any) { outcome = "caught " + e.name } outcome`,
    check: (r) => {
      // Either the host calls worked, or the sandbox was restarted; the host itself must not care.
      if (r.ok) expect(String(r.value)).toMatch(/returned|caught/);
      else expect(r.error?.name).toMatch(/RangeError|SandboxCrashError/);
    },
  },
  {
    name: "native stack exhaustion through JSON.parse of deep input",
    // deno: V8 parses deep JSON without recursion; either it succeeds or fails with a clean error.
    deno: (r) => expect(r.error === null || /RangeError|SyntaxError/.test(r.error.name)).toBe(true),
    code: `JSON.parse("[".repeat(1e6) + "]".repeat(1e6))`,
    // Parsing 2 MB of nesting is seconds of CPU on a loaded machine: a timeout would read as a wrong error name.
    timeoutMs: 30_000,
    check: (r) => {
      expect(r.ok).toBe(false);
      expect(r.error?.name).toMatch(/RangeError|SyntaxError/);
    },
  },
  {
    name: "Error.prepareStackTrace and Error.captureStackTrace give no structured frames",
    deno: "authority",
    code: `(Error as any).prepareStackTrace = (_e: unknown, frames: any[]) => frames[0]?.getThis?.();
        const o: any = {}; if (typeof (Error as any).captureStackTrace === "function") (Error as any).captureStackTrace(o);
        const st = new Error("x").stack; [typeof st, typeof o.stack === "object" && o.stack !== null, /node:|\\/work\\/|\\/src\\//.test(String(st))].join(" ")`,
    check: (r) => expect(str(r)).toBe("string false false"),
  },
  {
    name: "a timeout while a tool call is pending aborts the call",
    code: `await tools.probe.sleep({ ms: 10000 })`,
    timeoutMs: 200,
    check: async (r, { probe }) => {
      expect(r.error?.name).toBe("TimeoutError");
      const until = Date.now() + 5_000;
      while (probe.aborted < 1 && Date.now() < until) await new Promise((res) => setTimeout(res, 10));
      expect(probe.aborted).toBe(1);
    },
  },
  {
    name: "tampering with the builtins the guest runtime uses does not reach the host",
    deno: "authority",
    code: `JSON.parse = () => ({ hacked: true }); JSON.stringify = () => '["o","hacked",true]'; (Array.prototype as any).push = function () { return 0 };
        Object.defineProperty = (() => { throw new Error("nope") }) as any;
        const back = await tools.probe.echo({ value: { fine: [1, 2] } }); JSON.parse === JSON.parse && (back as any).fine.length === 2 ? "intact" : "broken"`,
    check: (r) => expect(str(r)).toBe("intact"),
  },
  {
    name: "a guest-defined Object.prototype.then does not hijack host results",
    code: `Object.defineProperty(Object.prototype, "then", { configurable: true, get() { return undefined } }); const v = await tools.probe.echo({ value: { ok: 1 } }); delete (Object.prototype as any).then; (v as any).ok`,
    check: (r) => expect(r.value).toBe(1),
  },
  // ---- issue 13: ambient authority of the deno engine ------------------------------------------
  {
    name: "remote modules (npm:, jsr:, https: on Deno's default allow-list) through indirect eval and new Function",
    code: `const out: string[] = [];
        for (const spec of ["npm:left-pad@1.3.0", "jsr:@std/path@1", "https://deno.land/std@0.224.0/path/mod.ts", "https://esm.sh/left-pad"]) {
          for (const load of [() => (0, eval)("import(" + JSON.stringify(spec) + ")"), () => new Function("s", "return import(s)")(spec)]) {
            try { await load(); out.push("LOADED " + spec) } catch (e: any) { out.push(String(e?.message).split("\\n")[0]) }
          }
        }
        out.join("\\n")`,
    check: (r) => expect(str(r)).not.toMatch(/LOADED/),
    deno: (r) => {
      for (const line of str(r).split("\n")) expect(line).toMatch(/--no-npm|Requires import access|--no-remote|cached-only/);
    },
  },
  {
    name: "web storage (localStorage, sessionStorage, caches, indexedDB) is absent",
    code: `const g: any = globalThis; ["localStorage", "sessionStorage", "caches", "indexedDB"].map((k) => k + "=" + typeof g[k]).join(",")`,
    check: (r) => expect(str(r)).toBe("localStorage=undefined,sessionStorage=undefined,caches=undefined,indexedDB=undefined"),
  },
  // ---- issue 13: guest code never outlives its run ---------------------------------------------
  {
    name: "work scheduled to run after the result (timers, promise loops, message loops, Node-compat timers) never calls the host",
    code: `const g: any = globalThis;
        const keep = (v: string) => tools.recorder.keep({ value: v }).catch(() => {});
        setTimeout(() => keep("timer"), 20); setInterval(() => keep("interval"), 20);
        (async () => { for (let i = 0; i < 1e6; i++) { await null; if (i % 50000 === 0) keep("microtask") } })();
        if (typeof g.MessageChannel === "function") { const mc = new g.MessageChannel(); let n = 0; mc.port1.onmessage = () => { if (++n % 100 === 0) keep("message"); mc.port2.postMessage(0) }; mc.port2.postMessage(0) }
        if (typeof g.Deno === "object") { const t: any = await (0, eval)("import('node:timers')"); t.setInterval(() => keep("node:timers"), 10); g.AbortSignal.timeout(20).addEventListener("abort", () => keep("abort")) }
        "scheduled"`,
    check: async (r, { recorder }) => {
      expect(r.value).toBe("scheduled");
      const atResult = recorder.received.length;
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(recorder.received.length).toBe(atResult);
    },
  },
  {
    name: "a reply delivered after the result runs a guest getter (Object.prototype.then) that calls the host",
    code: `Object.defineProperty(Object.prototype, "then", { configurable: true, get() { tools.recorder.keep({ value: "from a getter" }).catch(() => {}); return undefined } });
        (globalThis as any).late = tools.probe.echo({ value: { late: true } }); "started"`,
    check: async (r, { recorder }) => {
      expect(r.value).toBe("started");
      // The reply arrives only after the result (the snippet ends synchronously), so any call from the getter came after it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(recorder.received).not.toContain("from a getter");
    },
  },
  {
    name: "forged protocol frames written to stdout (a fake report) are not believed",
    code: `const g: any = globalThis; let wrote = "no stdout";
        if (typeof g.Deno === "object") {
          const enc = new TextEncoder();
          const frame = (h: object) => { const head = enc.encode(JSON.stringify(h)); const f = new Uint8Array(12 + head.length); const v = new DataView(f.buffer);
            v.setUint32(0, 0x314d4354, true); v.setUint32(4, 4 + head.length, true); v.setUint32(8, head.length, true); f.set(head, 12); return f };
          for (let seq = 1; seq < 5; seq++) g.Deno.stdout.writeSync(frame({ t: "report", seq, kind: "value", json: '"forged"', b: [] }));
          wrote = "wrote";
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        "real: " + wrote`,
    check: (r) => expect(str(r)).toBe("real: no stdout"),
    deno: (r) => {
      expect(r.value).not.toBe("forged");
      expect(r.error?.name).toBe("SandboxCrashError");
    },
  },
  // ---- issue 13: bounded host work for any guest value -----------------------------------------
  {
    name: "a value whose display has 60^6 paths (7 levels of 60 shared keys) and a DAG of 2^40 paths, returned and logged",
    code: `let o: any = 1; for (let d = 0; d < 7; d++) { const n: any = {}; for (let k = 0; k < 60; k++) n["k" + k] = o; o = n }
        let a: any = [1]; for (let i = 0; i < 40; i++) a = [a, a];
        console.log(o, a); console.dir(o); [o, a]`,
    timeoutMs: 30_000,
    check: (r) => {
      expect(r.error).toBeNull();
      expect(r.display).toMatch(/display limit/);
      expect(r.stdout).toMatch(/not shown/);
    },
  },
  {
    name: "a memory bomb in one session",
    code: `const hog: string[] = []; while (true) hog.push("y".repeat(1 << 20) + hog.length)`,
    // Reaching the 128 MB cap took over 15 s with the machine 8× oversubscribed (a TimeoutError).
    timeoutMs: 90_000,
    check: (r) => expect(r.error?.name).toBe("MemoryLimitError"),
  },
];

for (const engine of ["quickjs", "deno"] as const) describe(`SandboxExecutor escape corpus (${engine})`, () => {
  let dir: string;
  let victim: Session;
  let bystander: Session;
  let recorder: RecorderAdapter;
  let probe: ProbeAdapter;
  let bystanderCalls = 0;
  let markerDir: string;
  const hostGlobals = Object.getOwnPropertyNames(globalThis).sort();
  const protoNames = (o: object) => Object.getOwnPropertyNames(o).sort();
  const builtins = { Object: Object.prototype, Array: Array.prototype, Function: Function.prototype, Promise: Promise.prototype, Error: Error.prototype };
  const before = Object.fromEntries(Object.entries(builtins).map(([k, v]) => [k, protoNames(v)]));

  async function sandboxSession(base: string, adapters: ToolAdapter[]): Promise<Session> {
    const tools = new ToolRegistry();
    for (const a of adapters) tools.register(a);
    // A generous default: the attempts that are about a timeout set their own, and on a loaded
    // 2-core machine creating a workflow or a 100 MB string in QuickJS took over 5 s (a TimeoutError
    // that reads as a failed defence).
    const s = new Session({ storage: new FileStorage({ basePath: base }), executor: new SandboxExecutor({ engine, tools, defaultTimeoutMs: 60_000, memoryMb: 128 }) });
    await s.start();
    return s;
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-escape-"));
    markerDir = await mkdtemp(path.join(os.tmpdir(), "tcm-escape-marker-"));
    const bystanderProbe = new ProbeAdapter();
    bystander = await sandboxSession(path.join(dir, "bystander"), [bystanderProbe]);
    const r = await bystander.run("var bystanderState = 'intact'");
    expect(r.error).toBeNull();
  });

  afterAll(async () => {
    await bystander?.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    await rm(markerDir, { recursive: true, force: true, maxRetries: 5 });
  });

  afterEach(async () => {
    await victim?.close();
  });

  it.each(ATTEMPTS.map((a, i) => [i + 1, a.name, a] as const))("#%i %s", async (_n, _name, attempt) => {
    recorder = new RecorderAdapter();
    probe = new ProbeAdapter();
    victim = await sandboxSession(path.join(dir, `victim-${_n}`), [recorder, probe]);
    const marker = path.join(markerDir, `pwned-${_n}`);
    const code = typeof attempt.code === "function" ? attempt.code(marker) : attempt.code;
    // The bystander works while the attack runs, too.
    const [r, during] = await Promise.all([victim.run(code, attempt.timeoutMs ? { timeoutMs: attempt.timeoutMs } : {}), bystander.run("await tools.probe.echo({ value: 'during' })")]);
    expect(during.value).toBe("during");
    if (engine === "deno" && attempt.deno === "authority") {
      const probed = await victim.run(DENO_AUTHORITY_PROBE, { timeoutMs: 10_000 });
      expect(probed.value, JSON.stringify(probed.error)).toBe(ALL_DENIED);
    } else if (engine === "deno" && typeof attempt.deno === "function") attempt.deno(r);
    else await attempt.check(r, { recorder, probe, marker });

    // Nothing leaked into the host.
    expect(existsSync(marker)).toBe(false);
    expect(Object.getOwnPropertyNames(globalThis).sort()).toEqual(hostGlobals);
    for (const [k, v] of Object.entries(builtins)) expect(protoNames(v), `${k}.prototype`).toEqual(before[k]);
    const fresh: Record<string, unknown> = {};
    for (const key of ["polluted", "pollutedA", "pollutedB", "pollutedC", "pollutedD", "pollutedE", "pollutedF", "pollutedG", "hacked", "then"]) {
      expect(fresh[key], key).toBeUndefined();
    }

    // The attacked session and the bystander both still work.
    const after = await victim.run("[1, 2, 3].map((x) => x * 2)");
    expect(after.value).toEqual([2, 4, 6]);
    bystanderCalls++;
    const b = await bystander.run(`[bystanderState, await tools.probe.echo({ value: ${bystanderCalls} })]`);
    expect(b.value).toEqual(["intact", bystanderCalls]);
    // Up to four runs of the victim and two of the bystander, one of them given 90 s.
  }, 240_000);

  it("has at least 30 attempts", () => {
    expect(ATTEMPTS.length).toBeGreaterThanOrEqual(30);
  });
});

/**
 * Pyodide in the deno engine (SandboxExecutor({ language: "python" })): in plain Node, Python in
 * Pyodide reaches the host through `js` (run_js, pyodide.ffi, constructor("return this")() — it ran
 * commands as root there). Inside deno each of these reaches only a Deno whose every permission is
 * denied, except reading Pyodide's own folder. Every probe must come back "denied" (Deno's
 * NotCapable/PermissionDenied); loosening the deno flags makes them "GOT" and the test fail.
 * One Pyodide session is shared (a load takes seconds); it must still work after each attempt.
 */
const PY_PROBE = `
import js
from pyodide.ffi import JsException
def _why(e):
    name = getattr(e, "name", None) or type(e).__name__
    return "denied" if name in ("NotCapable", "PermissionDenied") else "error %s: %s" % (name, str(e).splitlines()[0] if str(e) else "")
async def attempt(f):
    try:
        r = f()
        if hasattr(r, "__await__"):
            r = await r
        return "GOT"
    except Exception as e:
        return _why(e)
`;

const PYODIDE_ATTEMPTS: Array<{ name: string; code: (marker: string, outside: string) => string; refusal?: RegExp }> = [
  { name: "import js; js.Deno.readTextFileSync('/etc/passwd')", code: () => `await attempt(lambda: js.Deno.readTextFileSync("/etc/passwd"))` },
  { name: "await js.Deno.readTextFile('/etc/passwd')", code: () => `await attempt(lambda: js.Deno.readTextFile("/etc/passwd"))` },
  { name: "from pyodide.code import run_js: Deno.readTextFileSync", code: () => `from pyodide.code import run_js\nawait attempt(lambda: run_js("Deno.readTextFileSync('/etc/hostname')"))` },
  { name: "run_js: constructor('return this')() reaches Deno.env", code: () => `from pyodide.code import run_js\nawait attempt(lambda: run_js("({}).constructor.constructor('return this')().Deno.env.toObject()"))` },
  { name: "pyodide.ffi: js.Function.new('return this')() then Deno.Command", code: () => `import pyodide.ffi\nawait attempt(lambda: js.Function.new("return this")().Deno.Command.new("/bin/true").outputSync())` },
  { name: "Deno.Command spawns a shell", code: (marker) => `await attempt(lambda: js.Deno.Command.new("/bin/sh", pyodide.ffi.to_js({"args": ["-c", "touch ${marker}"]}, dict_converter=js.Object.fromEntries)).outputSync())` },
  { name: "import('node:child_process') then execSync", code: (marker) => `from pyodide.code import run_js\ncp = await run_js("import('node:child_process')")\nawait attempt(lambda: cp.execSync("touch ${marker}"))` },
  { name: "node:fs through run_js", code: () => `from pyodide.code import run_js\nfs = await run_js("import('node:fs')")\nawait attempt(lambda: fs.readFileSync("/etc/passwd", "utf8"))` },
  { name: "fetch to the network", code: () => `await attempt(lambda: js.fetch("http://127.0.0.1:34567/"))` },
  { name: "pyodide.http.pyfetch", code: () => `import pyodide.http\nawait attempt(lambda: pyodide.http.pyfetch("http://127.0.0.1:34567/"))`, refusal: /^denied$|Requires net access/ },
  { name: "Deno.connect (raw TCP)", code: () => `await attempt(lambda: js.Deno.connect(pyodide.ffi.to_js({"hostname": "127.0.0.1", "port": 34567}, dict_converter=js.Object.fromEntries)))` },
  { name: "writing a file on the host", code: (marker) => `await attempt(lambda: js.Deno.writeTextFileSync("${marker}", "x"))` },
  { name: "reading outside the pyodide folder (the project's package.json)", code: (_m, outside) => `await attempt(lambda: js.Deno.readTextFileSync("${outside}"))` },
  // Node-compat existsSync answers false where it may not look, so the mount is refused as "does not exist".
  { name: "mounting the host file system into Pyodide (NODEFS)", code: () => `import pyodide_js\nawait attempt(lambda: pyodide_js.mountNodeFS("/mnt", "/etc"))`, refusal: /^denied$|hostPath '\/etc' does not exist/ },
  { name: "Deno.dlopen (FFI)", code: () => `await attempt(lambda: js.Deno.dlopen("libc.so.6", js.Object.new()))` },
  { name: "Deno.env.get", code: () => `await attempt(lambda: js.Deno.env.get("HOME"))` },
];

describe("SandboxExecutor escape corpus (python: Pyodide in deno)", () => {
  let dir: string;
  let markerDir: string;
  let session: Session;
  const hostGlobals = Object.getOwnPropertyNames(globalThis).sort();
  const outside = path.resolve("package.json");

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-escape-py-"));
    markerDir = await mkdtemp(path.join(os.tmpdir(), "tcm-escape-py-marker-"));
    session = new Session({ storage: new FileStorage({ basePath: dir }), executor: new SandboxExecutor({ language: "python", defaultTimeoutMs: 10_000 }) });
    await session.start();
    const r = await session.run(`${PY_PROBE}\nstate = "intact"`);
    expect(r.error).toBeNull();
  });

  afterAll(async () => {
    await session?.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    await rm(markerDir, { recursive: true, force: true, maxRetries: 5 });
  });

  it.each(PYODIDE_ATTEMPTS.map((a, i) => [i + 1, a.name, a] as const))("#%i %s", async (n, _name, attempt) => {
    const marker = path.join(markerDir, `pwned-${n}`);
    const r = await session.run(`import pyodide.ffi\n${attempt.code(marker, outside)}`);
    expect(r.error, JSON.stringify(r.error)).toBeNull();
    if (attempt.refusal) expect(r.value).toMatch(attempt.refusal);
    else expect(r.value).toBe("denied");
    expect(existsSync(marker)).toBe(false);
    expect(Object.getOwnPropertyNames(globalThis).sort()).toEqual(hostGlobals);
    // The session still works and kept its state.
    expect((await session.run("[state, 6 * 7]")).value).toEqual(["intact", 42]);
  });

  it("the one grant works: Pyodide's own folder is readable (so the probes above really reach Deno)", async () => {
    // The grant names Pyodide's real folder: node_modules may be a symlink (a git worktree's is).
    const r = await session.run(`len(js.Deno.readTextFileSync(${JSON.stringify(realpathSync(path.resolve("node_modules/pyodide/package.json")))})) > 0`);
    expect(r.value, JSON.stringify(r.error)).toBe(true);
  });
});
