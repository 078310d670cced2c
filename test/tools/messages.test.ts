/**
 * What the agent reads when a tool call fails: the call as it wrote it (`tools.wc.lines: …`), never
 * the internal operation on top (`tools.call: tools.wc.lines: …`), and paths inside its own
 * argument object (`text[0]`), not inside the internal argument list (`arguments[2].text[0]`).
 * Real sessions with the shipped example tools, in every executor kind that differs here.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Executor } from "../../src/execution/protocol.js";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { SandboxExecutor } from "../../src/execution/sandbox/executor.js";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";

const EXAMPLES = fileURLToPath(new URL("../../examples/tools", import.meta.url));

const EXECUTORS: Array<[string, () => Executor]> = [
  ["in-process", () => new InProcessExecutor({ toolsPath: EXAMPLES })],
  ["subprocess", () => new SubprocessExecutor({ toolsPath: EXAMPLES })],
  ["sandbox (quickjs)", () => new SandboxExecutor({ toolsPath: EXAMPLES })],
  ["sandbox (deno)", () => new SandboxExecutor({ toolsPath: EXAMPLES, engine: "deno" })],
];

/** The message of what `code` throws inside the guest. */
async function thrownMessage(session: Session, code: string): Promise<string> {
  const r = await session.run(`await (async () => { try { ${code}; return "no error"; } catch (e) { return e.message; } })()`);
  expect(r.error).toBeNull();
  expect(r.value).not.toBe("no error");
  return String(r.value);
}

describe.each(EXECUTORS)("tool call errors read as the agent wrote the call (%s)", (_name, make) => {
  let dir: string;
  let session: Session;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-messages-"));
    session = new Session({ storage: new FileStorage({ basePath: dir }), executor: make() });
    await session.start();
  });

  afterAll(async () => {
    await session?.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  it("a failing command: one prefix, the call's", async () => {
    const message = await thrownMessage(session, 'await tools.wc.lines({ files: ["/no/such/file-7f3a"] })');
    expect(message.startsWith("tools.wc.lines: ")).toBe(true);
    expect(message).not.toContain("tools.call");
    expect(message).not.toMatch(/tools\.wc\.lines: .*tools\.wc\.lines:/);
  });

  it("bad arguments, unknown names: labelled with the call", async () => {
    expect(await thrownMessage(session, "await tools.echo.say({ text: 5 })")).toBe("tools.echo.say: Invalid argument 'text' expected array of string, got number 5");
    expect(await thrownMessage(session, 'await tools.ecko.say({ text: ["a"] })')).toMatch(/^tools\.ecko\.say: Unknown tool: ecko\. Did you mean: echo/);
    expect(await thrownMessage(session, 'await tools.call("echo", "say", { text: [1] })')).toBe("tools.echo.say: Invalid argument 'text[0]' expected string, got number 1");
  });
});

describe.each(["quickjs", "deno"] as const)("values that cannot cross the sandbox boundary (%s)", (engine) => {
  let dir: string;
  let session: Session;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-messages-"));
    session = new Session({ storage: new FileStorage({ basePath: dir }), executor: new SandboxExecutor({ toolsPath: EXAMPLES, engine }) });
    await session.start();
  });

  afterAll(async () => {
    await session?.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  it("name the path inside the agent's argument object", async () => {
    const message = await thrownMessage(session, 'await tools.echo.say({ text: ["a", () => 1] })');
    expect(message).toMatch(/^tools\.echo\.say: a function cannot be copied across the sandbox boundary \(at text\[1\]\)/);
    expect(message).not.toContain("arguments[");
    const whole = await thrownMessage(session, "await tools.echo.say(() => 1)");
    expect(whole).toMatch(/^tools\.echo\.say: a function cannot be copied .*\(at the arguments object\)/);
  });
});
