/**
 * The metrics issue 39 lists beyond runs and tool calls: executor restarts in every executor that
 * replaces its engine (a subprocess child, a QuickJS sandbox, a deno process), and how the run
 * ledgers grow (entries and bytes written by durable runs). Each restart is caused for real: an
 * out-of-memory or a loop only killing the process stops.
 */
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileStorage, InProcessExecutor, SandboxExecutor, Session, SubprocessExecutor, type Executor } from "../../src/index.js";
import { REPO } from "../cli/harness.js";
import { registerInMemoryOtel, type InMemoryOtel } from "../helpers/otel.js";

let otel: InMemoryOtel;
let dir: string;

beforeAll(async () => {
  otel = registerInMemoryOtel();
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-otel-metrics-"));
  await mkdir(path.join(dir, "tools"));
  await copyFile(path.join(REPO, "examples", "tools", "echo.yaml"), path.join(dir, "tools", "echo.yaml"));
});
afterAll(async () => {
  await otel.stop();
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

async function restartsOf(executor: string): Promise<Array<{ attributes: Record<string, unknown>; value: number }>> {
  const points = (await otel.metricValues()).get("code_mode.executor.restarts") ?? [];
  return points.filter((p) => p.attributes["code_mode.executor"] === executor);
}

async function inSession(executor: Executor, code: string, timeoutMs: number): Promise<string | undefined> {
  const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, "store") }), executor });
  try {
    const r = await session.run(code, { timeoutMs });
    // The engine is usable again after the restart.
    expect((await session.run("1 + 1")).value).toBe(2);
    return r.error?.name;
  } finally {
    await session.close();
  }
}

describe("metrics: executor restarts", () => {
  it("a QuickJS sandbox replaced after running out of memory counts one restart, by reason", async () => {
    const error = await inSession(new SandboxExecutor({ memoryMb: 32 }), "const a = []; for (;;) a.push(new Array(100000).fill(1));", 20_000);
    expect(error).toBe("MemoryLimitError");
    expect(await restartsOf("sandbox")).toContainEqual({ attributes: { "code_mode.executor": "sandbox", "code_mode.executor.restart_reason": "MemoryLimitError" }, value: 1 });
  });

  it("a deno sandbox process killed for a loop past its deadline counts a restart", async () => {
    const error = await inSession(new SandboxExecutor({ engine: "deno" }), "for (;;) {}", 1_000);
    expect(error).toBe("TimeoutError");
    const points = await restartsOf("sandbox");
    expect(points.find((p) => p.attributes["code_mode.executor.restart_reason"] === "TimeoutError")?.value).toBeGreaterThanOrEqual(1);
  });

  it("a subprocess child that ran out of heap counts a restart", async () => {
    const error = await inSession(new SubprocessExecutor({ maxMemoryMb: 64 }), "const a = []; for (;;) a.push(new Array(100000).fill(1));", 60_000);
    expect(error).toBe("MemoryLimitError");
    expect((await restartsOf("subprocess")).find((p) => p.attributes["code_mode.executor.restart_reason"] === "MemoryLimitError")?.value).toBe(1);
  });
});

describe("metrics: run ledger size", () => {
  it("a durable run's logged calls add to code_mode.ledger.entries and code_mode.ledger.bytes", async () => {
    const session = new Session({
      storage: new FileStorage({ basePath: path.join(dir, "durable") }),
      executor: new InProcessExecutor({ toolsPath: path.join(dir, "tools") }),
      durable: { secret: "a".repeat(32) },
    });
    try {
      const r = await session.run('for (const t of ["a", "b", "c"]) await tools.echo.say({ text: [t] }); 1');
      expect(r.error).toBeNull();
    } finally {
      await session.close();
    }
    const m = await otel.metricValues();
    expect(m.get("code_mode.ledger.entries")?.[0]?.value).toBeGreaterThanOrEqual(3);
    expect(m.get("code_mode.ledger.bytes")?.[0]?.value).toBeGreaterThan(3 * '["x"]'.length);
  });
});
