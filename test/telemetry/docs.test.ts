/**
 * docs/telemetry.md, run: its shell blocks against the built CLI (on PATH as `ts-code-mode`), with the
 * collector address replaced by an OTLP/HTTP receiver on loopback and the server port by a free one.
 * Also: --help of run, mcp, serve and agent run documents --otel.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { cleanup, cli, ensureBuilt, MAIN, REPO, tempDir } from "../cli/harness.js";
import { startOtlpReceiver, waitFor, type OtlpReceiver } from "../helpers/otlp-receiver.js";

let dir: string;
let receiver: OtlpReceiver;
let blocks: string[];
let env: NodeJS.ProcessEnv;
let port: number;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const p = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return p;
}

function bash(script: string, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-euc", script], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  await ensureBuilt();
  receiver = await startOtlpReceiver();
  dir = await tempDir();
  const bin = path.join(dir, "bin");
  await mkdir(bin);
  await writeFile(path.join(bin, "ts-code-mode"), `#!/bin/sh\nexec "${process.execPath}" "${MAIN}" "$@"\n`);
  await chmod(path.join(bin, "ts-code-mode"), 0o755);
  env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` };
  port = await freePort();
  const doc = await readFile(path.join(REPO, "docs", "telemetry.md"), "utf8");
  blocks = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.replaceAll("http://127.0.0.1:4318", receiver.url).replaceAll("8787", String(port)));
}, 300_000);

afterAll(async () => {
  await receiver?.close();
  if (dir) await cleanup(dir);
});

describe("docs/telemetry.md", () => {
  it("has the three shell blocks this test runs", () => {
    expect(blocks).toHaveLength(3);
    expect(blocks[1]).toContain("serve --otel");
  });

  it("run --otel exports the run and its tool call when the command exits", async () => {
    const r = await bash(blocks[0]!);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("hi");
    await waitFor(() => receiver.spans.some((s) => s.name === "execute_tool echo.say"), "the run's spans");
    const tool = receiver.spans.find((s) => s.name === "execute_tool echo.say")!;
    const run = receiver.spans.find((s) => s.spanId === tool.parentSpanId)!;
    expect(run.name).toBe("code_mode.session.run");
    expect(run.service).toBe("ts-code-mode");
  }, 120_000);

  it("serve --otel behind the curl client with a traceparent: one trace with the request, the run and the tool call", async () => {
    // Its own process group: the server (bash's child) is stopped with the group.
    const server = spawn("bash", ["-euc", blocks[1]!], { cwd: dir, env, stdio: ["ignore", "ignore", "pipe"], detached: true });
    let stderr = "";
    server.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    try {
      await waitFor(() => stderr.includes("listening on"), "serve to listen", 60_000);
      const r = await bash(blocks[2]!);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("traced");
      const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
      await waitFor(() => receiver.spans.some((s) => s.traceId === traceId && s.name === "execute_tool echo.say"), "the traced request's spans");
      const mine = receiver.spans.filter((s) => s.traceId === traceId);
      const request = mine.find((s) => s.name === "POST /sessions/:id/run")!;
      expect(request.parentSpanId).toBe("00f067aa0ba902b7");
      expect(request.service).toBe("agents");
      const run = mine.find((s) => s.name === "code_mode.session.run")!;
      expect(run.parentSpanId).toBe(request.spanId);
      expect(mine.find((s) => s.name === "execute_tool echo.say")!.parentSpanId).toBe(run.spanId);
    } finally {
      const exited = new Promise((r) => (server.exitCode !== null ? r(null) : server.once("exit", r)));
      process.kill(-server.pid!, "SIGTERM");
      await exited;
    }
  }, 180_000);
});

describe("--help", () => {
  it.each([["run"], ["mcp"], ["serve"], ["agent run"]])("%s documents --otel and --otel-content", async (command) => {
    const r = await cli([...command.split(" "), "--help"], { cwd: REPO });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("--otel ");
    expect(r.stdout).toContain("OTEL_EXPORTER_OTLP_ENDPOINT");
    expect(r.stdout).toContain("--otel-content <chars>");
  });
});
