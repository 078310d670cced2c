/**
 * Spans and metrics of runs and namespace calls, read from the SDK's in-memory exporter: one tree
 * per run (session.run → execute_tool ...), the attributes of each, the run's value size, no code,
 * arguments or results unless opted in, and the metric instruments.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { copyFile, mkdtemp, mkdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { FileStorage, InProcessExecutor, Session, SubprocessExecutor, configureTelemetry, retry, approval, ToolError } from "../../src/index.js";
import { REPO } from "../cli/harness.js";
import { registerInMemoryOtel, parentId, type InMemoryOtel } from "../helpers/otel.js";

let otel: InMemoryOtel;
let dir: string;

beforeAll(async () => {
  otel = registerInMemoryOtel();
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-otel-"));
  await mkdir(path.join(dir, "tools"));
  await copyFile(path.join(REPO, "examples", "tools", "echo.yaml"), path.join(dir, "tools", "echo.yaml"));
});
afterAll(async () => {
  await otel.stop();
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});
afterEach(() => {
  otel.reset();
  configureTelemetry({});
});

async function withSession<T>(executor: InProcessExecutor | SubprocessExecutor, fn: (s: Session) => Promise<T>): Promise<T> {
  const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, "store") }), executor });
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}

describe.each([
  ["in-process", () => new InProcessExecutor({ toolsPath: path.join(dir, "tools") })],
  ["subprocess", () => new SubprocessExecutor({ toolsPath: path.join(dir, "tools") })],
])("%s", (kind, make) => {
  it("a run is one span with its tool calls and writes inside it", async () => {
    const r = await withSession(make(), (s) => s.run('const a = await tools.echo.say({ text: ["hi"] }); await artifacts.save("x.txt", "secret-data"); a.trim()'));
    expect(r.error).toBeNull();
    const [run] = otel.named("code_mode.session.run");
    expect(run).toBeDefined();
    expect(run!.attributes).toMatchObject({ "code_mode.executor": kind, "code_mode.language": "typescript", "code_mode.ok": true, "code_mode.run.value_bytes": 2 });
    const [tool] = otel.named("execute_tool echo.say");
    expect(tool!.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "echo.say",
      "code_mode.tool": "echo",
      "code_mode.tool.callable": "say",
      "code_mode.tool.type": "cli",
      "code_mode.executor": kind,
      "code_mode.ok": true,
      "code_mode.tool.retries": 0,
      "code_mode.tool.approval_waits": 0,
    });
    const [save] = otel.named("code_mode.artifacts.save");
    expect(save!.attributes).toMatchObject({ "code_mode.target": "x.txt", "code_mode.ok": true });
    for (const child of [tool!, save!]) {
      expect(child.spanContext().traceId).toBe(run!.spanContext().traceId);
      expect(parentId(child)).toBe(run!.spanContext().spanId);
    }
    // No code, arguments, results or values by default.
    const everything = JSON.stringify(otel.spans().map((s) => s.attributes));
    expect(everything).not.toContain("secret-data");
    expect(everything).not.toContain("hi");
  });

  it("a failed run and a failed tool call are marked with error.type; the tool's error code is kept", async () => {
    const r = await withSession(make(), (s) => s.run('await tools.echo.nope({})'));
    expect(r.ok).toBe(false);
    const [run] = otel.named("code_mode.session.run");
    expect(run!.status.code).toBe(2);
    expect(run!.attributes["error.type"]).toBe(r.error!.name);
    const [tool] = otel.named("execute_tool echo.nope");
    expect(tool!.status.code).toBe(2);
    expect(tool!.attributes["code_mode.ok"]).toBe(false);
    expect(tool!.attributes["error.type"]).toBeDefined();
  });
});

describe("in process", () => {
  it("retries and approval waits are counted on the tool's span", async () => {
    let calls = 0;
    // The tool runs, then its first answer is treated as a transient failure: retry runs it again.
    const failing = async (_ctx: unknown, next: () => Promise<unknown>) => {
      const value = await next();
      if (++calls === 1) throw new ToolError({ tool: "echo", callable: "say", code: "TIMEOUT", message: "slow" });
      return value;
    };
    const executor = new InProcessExecutor({
      toolsPath: path.join(dir, "tools"),
      middleware: [approval(async () => { await new Promise((r) => setTimeout(r, 20)); return true; }), retry({ attempts: 3, baseDelayMs: 1 }), failing],
    });
    const r = await withSession(executor, (s) => s.run('await tools.echo.say({ text: ["x"] })'));
    expect(r.error).toBeNull();
    const [tool] = otel.named("execute_tool echo.say");
    expect(tool!.attributes["code_mode.tool.retries"]).toBe(1);
    expect(tool!.attributes["code_mode.tool.approval_waits"]).toBe(1);
    expect(tool!.attributes["code_mode.tool.approval_wait_ms"]).toBeGreaterThanOrEqual(1);
  });

  it("opted-in content is recorded, cut to maxChars", async () => {
    configureTelemetry({ content: { maxChars: 8 } });
    await withSession(new InProcessExecutor({ toolsPath: path.join(dir, "tools") }), (s) => s.run('await tools.echo.say({ text: ["abcdefghijklmnop"] })'));
    const [run] = otel.named("code_mode.session.run");
    expect(run!.attributes["code_mode.run.code"]).toBe("await to…");
    const [tool] = otel.named("execute_tool echo.say");
    expect(tool!.attributes["code_mode.tool.args"]).toBe('{"text":…');
    expect(String(tool!.attributes["code_mode.tool.result"])).toMatch(/^.{8}…$/);
  });

  it("metrics: runs, run duration, tool calls, tool duration, errors by name, sessions open", async () => {
    const executor = new InProcessExecutor({ toolsPath: path.join(dir, "tools") });
    const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, "store") }), executor });
    await session.run('await tools.echo.say({ text: ["m"] })');
    await session.run("throw new RangeError('x')");
    let m = await otel.metricValues();
    expect(m.get("code_mode.sessions.open")?.find((p) => p.attributes["code_mode.executor"] === "in-process")?.value).toBeGreaterThanOrEqual(1);
    await session.close();
    m = await otel.metricValues();
    const runs = m.get("code_mode.runs") ?? [];
    expect(runs.find((p) => p.attributes["code_mode.ok"] === true && p.attributes["code_mode.executor"] === "in-process")?.value).toBeGreaterThanOrEqual(1);
    expect(runs.find((p) => p.attributes["error.type"] === "RangeError")?.value).toBeGreaterThanOrEqual(1);
    expect((m.get("code_mode.run.duration") ?? []).length).toBeGreaterThan(0);
    expect(m.get("code_mode.tool.calls")?.find((p) => p.attributes["code_mode.tool"] === "echo")?.value).toBeGreaterThanOrEqual(1);
    expect((m.get("code_mode.tool.duration") ?? []).length).toBeGreaterThan(0);
    expect(m.get("code_mode.errors")?.find((p) => p.attributes["error.type"] === "RangeError")?.value).toBeGreaterThanOrEqual(1);
  });
});
