/**
 * InProcessExecutor contains the agent's failures (issue 13, principle 8): an un-awaited rejected
 * promise or an exception thrown from a timer in the agent's code is reported on the run's (or the
 * next run's) stderr, and the host process survives. A crash must be observable, so the executor
 * runs in a real child `node` process hosting it (the built package, as users run it), and the
 * test reads that process's exit code and the results it prints.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const dist = pathToFileURL(path.resolve("dist/index.js")).href;

/** A host program: runs each snippet in one InProcessExecutor session, prints one JSON line per result, then `extra`. */
const HOST = `
import { FileStorage, InProcessExecutor, Session } from ${JSON.stringify(dist)};
const [base, snippetsJson, extra] = process.argv.slice(2);
const session = new Session({ storage: new FileStorage({ basePath: base }), executor: new InProcessExecutor({ defaultTimeoutMs: 5000 }) });
await session.start();
// A second executor in the same process adds no listeners.
const other = new Session({ storage: new FileStorage({ basePath: base }), executor: new InProcessExecutor() });
await other.start();
await other.close();
for (const code of JSON.parse(snippetsJson)) {
  const r = await session.run(code);
  process.stdout.write(JSON.stringify({ ok: r.ok, value: r.value, stderr: r.stderr, error: r.error }) + "\\n");
}
await session.close();
process.stdout.write(JSON.stringify({ listeners: process.listenerCount("unhandledRejection") + process.listenerCount("uncaughtException") }) + "\\n");
if (extra === "host-bug") Promise.reject(new Error("a bug of the host's own"));
else process.stdout.write("host alive\\n");
`;

let dir: string;
let hostScript: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "tcm-inproc-fail-"));
  hostScript = path.join(dir, "host.mjs");
  writeFileSync(hostScript, HOST);
});

afterAll(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }));

interface Line {
  ok?: boolean;
  value?: unknown;
  stderr?: string;
  listeners?: number;
}

function host(snippets: string[], extra = ""): { status: number | null; lines: Line[]; stdout: string; stderr: string } {
  const p = spawnSync(process.execPath, [hostScript, path.join(dir, "base"), JSON.stringify(snippets), extra], { encoding: "utf8", timeout: 60_000 });
  const lines = p.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Line);
  return { status: p.status, lines, stdout: p.stdout, stderr: p.stderr };
}

describe("InProcessExecutor contains the agent's failures; the host process survives", () => {
  it("an un-awaited rejected promise (the issue's example) is reported with the next run", () => {
    const r = host(['async function f(){ throw new Error("boom") }; f(); "after"', '"next"']);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("host alive");
    expect(r.lines[0]).toMatchObject({ ok: true, value: "after" });
    expect(`${r.lines[0]!.stderr}${r.lines[1]!.stderr}`).toContain("Unhandled promise rejection: Error: boom");
    expect(r.lines[1]).toMatchObject({ ok: true, value: "next" });
  });

  it("a rejection noticed during the run is on that run's stderr", () => {
    const r = host(['Promise.reject(new Error("floating")); await new Promise((r) => setTimeout(r, 30)); 7']);
    expect(r.status).toBe(0);
    expect(r.lines[0]).toMatchObject({ ok: true, value: 7 });
    expect(r.lines[0]!.stderr).toContain("Unhandled promise rejection: Error: floating");
  });

  for (const [label, schedule] of [
    ["a timer", "setTimeout(() => { throw new Error('thrown later') }, 5)"],
    ["an interval", "const iv = setInterval(() => { clearInterval(iv); throw new Error('thrown later') }, 5)"],
    ["an immediate", "setImmediate(() => { throw new Error('thrown later') })"],
    ["a microtask", "queueMicrotask(() => { throw new Error('thrown later') })"],
    ["process.nextTick", "process.nextTick(() => { throw new Error('thrown later') })"],
  ] as const) {
    it(`an exception thrown from ${label} is reported on the run's stderr`, () => {
      const r = host([`${schedule}; await new Promise((r) => setTimeout(r, 50)); "after"`, '"next"']);
      expect(r.status).toBe(0);
      expect(r.stdout).toContain("host alive");
      expect(r.lines[0]).toMatchObject({ ok: true, value: "after" });
      expect(r.lines[0]!.stderr).toMatch(/Uncaught exception \(outside the awaited code, e\.g\. thrown from a timer\): Error: thrown later/);
      expect(r.lines[1]).toMatchObject({ ok: true, value: "next" });
    });
  }

  it("fetch and import() promises the agent did not await are its failures too", () => {
    const r = host(['fetch("http://127.0.0.1:1/"); import("no-such-package-anywhere"); await new Promise((r) => setTimeout(r, 300)); "after"']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("host alive");
    const stderr = r.lines[0]!.stderr!;
    expect(stderr).toMatch(/Unhandled promise rejection: TypeError: fetch failed/);
    expect(stderr).toMatch(/Unhandled promise rejection: Error: Cannot find package 'no-such-package-anywhere'/);
  });

  it("one pair of process listeners however many executors; the host's own unhandled rejection still ends it as Node would", () => {
    const r = host(['async function f(){ throw new Error("boom") }; f(); "after"'], "host-bug");
    expect(r.lines.at(-1)).toEqual({ listeners: 2 });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("a bug of the host's own");
  });
});
