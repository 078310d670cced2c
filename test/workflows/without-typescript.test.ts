/**
 * `typescript` is an optional dependency (issue 41: 23 MB of a 40 MB core install). In a project
 * where it is not installed — ts-code-mode's build and every other package, no typescript — a
 * workflow's signature is read by the light reader, the console highlights with acorn, and the
 * process says so once on stderr; nothing fails.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumerProject } from "../helpers/consumer.js";
import { ensureBuilt, REPO } from "../mcp/harness.js";

const exec = promisify(execFile);
let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-no-typescript-"));
}, 180_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

const WORKFLOW = `/** Scan a host and save the open ports as an artifact. */
interface Args {
  /** the host to scan */
  host: string;
  ports?: string;
}
export async function run({ host, ports = "1-1024" }: Args) {
  return host + ports;
}`;

describe("without the typescript package", () => {
  it("workflow signatures come from the light reader, the console highlights, and one notice says why", async () => {
    const project = path.join(dir, "project");
    await consumerProject(project, REPO, new Set(["typescript"]));
    const script = path.join(project, "check.mjs");
    await writeFile(
      script,
      `const typescript = await import("typescript").then(() => "installed", (e) => e.code);
const { extractSignature } = await import("ts-code-mode");
const source = ${JSON.stringify(WORKFLOW)};
const first = await extractSignature(source);
const second = await extractSignature("export const run = async ({ n }: { n: number }) => n * 3;");
const broken = await extractSignature("export async function run() {\\n  const x = ;\\n}");
const { highlightTypeScript } = await import("./node_modules/ts-code-mode/dist/console/highlight.js");
const html = String(await highlightTypeScript("const x = 1; // note\\ninterface A { a: string }"));
console.log(JSON.stringify({ typescript, first, second: second.params, broken: broken.syntaxError, html }));
`,
    );
    const { stdout, stderr } = await exec(process.execPath, [script], { cwd: project, timeout: 60_000 });
    const out = JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;
    expect(out["typescript"]).toBe("ERR_MODULE_NOT_FOUND");
    expect(out["first"]).toEqual({
      description: "Scan a host and save the open ports as an artifact.",
      params: [
        { name: "host", type: "string", required: true, description: "the host to scan" },
        { name: "ports", type: "string", required: false, default: "1-1024" },
      ],
      closedParams: true,
      hasRun: true,
      syntaxError: null,
    });
    expect(out["second"]).toEqual([{ name: "n", type: "number", required: true }]);
    expect(out["broken"]).toEqual({ message: "Unexpected token", line: 2, column: 13 });
    expect(out["html"]).toBe(
      '<span class="tok-keyword">const</span> x = <span class="tok-number">1</span>; <span class="tok-comment">// note</span>\ninterface A { a: string }',
    );
    const notices = stderr.split("\n").filter((l) => l.includes('"typescript" is not installed'));
    expect(notices).toEqual(['ts-code-mode: the optional package "typescript" is not installed: workflow parameters are read by a lighter parser (types as written) and the console highlights without it. For exact signatures: npm install typescript@~5.9']);
  }, 120_000);
});
