/**
 * Issue 32, "done when": a container session cannot read one byte of the host outside its mounts
 * by any tool the README's examples install. Every CLI tool `init` installs (examples/tools), each
 * recipe and the escape hatch, is called with every path-like argument pointed at host-only
 * places (a secret file and a folder made on the host for this test, /etc/hostname, /root, the
 * host's home); so are the shell tool, skills.run and the guest's own fs. Nothing of the secret,
 * nor the name inside the host-only folder, may come back in a value, an error or its stderr.
 */
import { randomUUID } from "node:crypto";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContainerExecutor } from "../../src/execution/container/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { CallableInfo, ParamSpec } from "../../src/tools/protocol.js";
import { EXAMPLE_TOOLS_PATH } from "../conformance/executor.js";
import { ensureTestImage } from "../helpers/container.js";

const TOKEN = `tcm-host-secret-${randomUUID()}`;
let tmp: string;
let secretFile: string;
let secretDir: string;
let s: Session;
let registry: ToolRegistry;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "tcm-host-reads-"));
  secretFile = path.join(tmp, "secret.txt");
  secretDir = path.join(tmp, "host-only");
  await writeFile(secretFile, `${TOKEN}\n`, { mode: 0o644 });
  await mkdir(secretDir);
  await writeFile(path.join(secretDir, `${TOKEN}-entry`), "x");
  const tools = path.join(tmp, "tools");
  await cp(EXAMPLE_TOOLS_PATH, tools, { recursive: true });
  registry = await ToolRegistry.load(tools);
  // The control: the same kind of tool opted out to the host does read it (so the probe can see a leak).
  await writeFile(path.join(tools, "hostcat.yaml"), "name: hostcat\ndescription: Print a file\ncommand: cat\nruns_on: host\nend_of_options: true\nschema:\n  positional:\n    - { name: files, type: array, required: true }\n");
  s = new Session({ storage: new FileStorage({ basePath: path.join(tmp, "store") }), executor: new ContainerExecutor({ image: await ensureTestImage(), toolsPath: tools }) });
  await s.start();
}, 240_000);

afterAll(async () => {
  await s?.close();
  await registry?.close();
  await rm(tmp, { recursive: true, force: true, maxRetries: 5 });
});

/** Host-only places a path argument is pointed at. */
const targets = () => [secretFile, secretDir, tmp, "/etc/hostname", "/root", os.homedir()];

/** Arguments for one callable with every path-like parameter set to `target`. */
function argsFor(params: readonly ParamSpec[], target: string): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const p of params) {
    if (p.enum?.length) {
      if (p.required) args[p.name] = p.enum[0];
    } else if (p.type === "string") args[p.name] = p.name === "pattern" ? "." : p.name === "format" ? "+%s" : target;
    else if (p.type === "array") args[p.name] = [target];
    else if (p.required && (p.type === "integer" || p.type === "number")) args[p.name] = 1;
    else if (p.required && p.type === "boolean") args[p.name] = true;
  }
  return args;
}

/** What came back, all of it: the value, the error message and its stderr, stdout of the run. */
async function everything(code: string): Promise<string> {
  const r = await s.run(code, { timeoutMs: 30_000 });
  return JSON.stringify([r.value ?? null, r.error, r.stdout, r.stderr]);
}

describe("a container session reads nothing of the host outside its mounts", () => {
  it("through any callable of any tool init installs", async () => {
    const calls: Array<{ tool: string; callable: string | null; args: Record<string, unknown> }> = [];
    for (const name of registry.names()) {
      const info = await registry.info(name);
      const callables: Array<[string | null, CallableInfo]> = info.callables.map((c) => [c.name, c]);
      if (info.direct) callables.push([null, info.direct]);
      for (const [callable, c] of callables) for (const target of targets()) calls.push({ tool: name, callable, args: argsFor(c.params, target) });
    }
    expect(new Set(calls.map((c) => c.tool))).toEqual(new Set(["date", "echo", "grep", "ls", "sha256sum", "uname", "wc"]));
    // The same calls on the host would read them (the test's own check that the targets are real).
    expect(calls.some((c) => JSON.stringify(c.args).includes(secretFile))).toBe(true);
    const leaks: string[] = [];
    for (const c of calls) {
      const out = await everything(`await tools.call(${JSON.stringify(c.tool)}, ${JSON.stringify(c.callable)}, ${JSON.stringify(c.args)})`);
      // echo prints its arguments back: the path may come back, never what is behind it.
      if (out.includes(TOKEN)) leaks.push(`${c.tool}.${c.callable ?? "(escape hatch)"} ${JSON.stringify(c.args)}: ${out.slice(0, 300)}`);
    }
    expect(leaks).toEqual([]);
    expect(await everything(`await tools.hostcat({ files: [${JSON.stringify(secretFile)}] })`)).toContain(TOKEN);
  }, 600_000);

  it("through the shell tool, skills.run and the guest's own fs", async () => {
    for (const target of [secretFile, secretDir]) {
      expect(await everything(`await tools.shell.exec({ command: ["sh", "-c", "cat \\"$0\\" || ls -la \\"$0\\"", ${JSON.stringify(target)}] })`)).not.toContain(TOKEN);
      expect(await everything(`const fs = await import("node:fs"); [fs.existsSync(${JSON.stringify(target)}), (() => { try { return fs.readFileSync(${JSON.stringify(target)}, "utf8"); } catch (e) { return String(e); } })()]`)).not.toContain(TOKEN);
    }
    await s.run('await skills.create({ name: "reader", description: "Reads a path. Use in tests.", body: "x", files: { "scripts/read.cjs": "const fs = require(\\"fs\\"); for (const p of process.argv.slice(2)) { try { console.log(fs.readFileSync(p, \\"utf8\\")); } catch (e) { console.log(String(e)); try { console.log(fs.readdirSync(p).join(\\",\\")); } catch {} } }" } })');
    expect(await everything(`await skills.run("reader", "scripts/read.cjs", ${JSON.stringify([secretFile, secretDir])})`)).not.toContain(TOKEN);
  }, 120_000);
});
