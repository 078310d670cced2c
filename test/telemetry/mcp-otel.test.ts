/**
 * MCP over HTTP in a trace: this process (the in-memory SDK) calls an MCP-over-HTTP tool, whose
 * requests carry the tool call's traceparent, to `ts-code-mode mcp --http --otel` (exporting to an
 * OTLP receiver on loopback). The server's request span, its `tools/call run_code` span, the run and
 * the run's own tool call are all in the client's trace, each under the one before.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { FileStorage, InProcessExecutor, Session } from "../../src/index.js";
import { cleanup, ensureBuilt, REPO, tempDir } from "../cli/harness.js";
import { startHttpServer, type HttpServerProcess } from "../mcp/harness.js";
import { registerInMemoryOtel, type InMemoryOtel } from "../helpers/otel.js";
import { startOtlpReceiver, waitFor, type OtlpReceiver } from "../helpers/otlp-receiver.js";

let serverDir: string;
let clientDir: string;
let receiver: OtlpReceiver;
let server: HttpServerProcess;
let otel: InMemoryOtel;

beforeAll(async () => {
  await ensureBuilt();
  receiver = await startOtlpReceiver();
  serverDir = await tempDir();
  clientDir = await tempDir();
  await mkdir(path.join(serverDir, "tools"), { recursive: true });
  await copyFile(path.join(REPO, "examples", "tools", "echo.yaml"), path.join(serverDir, "tools", "echo.yaml"));
  server = await startHttpServer(["--otel", "--base", serverDir, "--executor", "in-process"], {
    cwd: serverDir,
    env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "100" },
  });
  await mkdir(path.join(clientDir, "tools"), { recursive: true });
  await writeFile(path.join(clientDir, "tools", "remote.yaml"), `name: remote\ntype: mcp\ntransport: http\nurl: ${server.url}\n`);
  otel = registerInMemoryOtel();
}, 300_000);

afterAll(async () => {
  await otel?.stop();
  await server?.stop();
  await receiver?.close();
  if (serverDir) await cleanup(serverDir);
  if (clientDir) await cleanup(clientDir);
});

describe("MCP over HTTP with --otel", () => {
  it("the client's trace continues through the MCP tool's requests into the server's run and its tool call", async () => {
    const session = new Session({ storage: new FileStorage({ basePath: path.join(clientDir, "store") }), executor: new InProcessExecutor({ toolsPath: path.join(clientDir, "tools") }) });
    let traceId = "";
    try {
      await otel.tracer.startActiveSpan("client", async (span) => {
        traceId = span.spanContext().traceId;
        const r = await session.run(`await tools.remote.run_code({ code: 'await tools.echo.say({ text: ["deep"] })' })`);
        expect(r.error).toBeNull();
        expect(JSON.stringify(r.value)).toContain("deep");
        span.end();
      });
    } finally {
      await session.close();
    }
    await waitFor(() => receiver.spans.some((s) => s.traceId === traceId && s.name === "execute_tool echo.say"), "the server's spans in the client's trace");
    const mine = receiver.spans.filter((s) => s.traceId === traceId);
    const clientTool = otel.named("execute_tool remote.run_code")[0]!;
    const toolsCall = mine.find((s) => s.name === "tools/call run_code")!;
    expect(toolsCall, JSON.stringify(mine.map((s) => [s.name, s.spanId, s.parentSpanId]))).toBeDefined();
    expect(toolsCall.attributes).toMatchObject({ "mcp.method.name": "tools/call", "gen_ai.tool.name": "run_code" });
    const request = mine.find((s) => s.spanId === toolsCall.parentSpanId)!;
    expect(request.name).toBe("POST /mcp");
    expect(request.parentSpanId).toBe(clientTool.spanContext().spanId);
    const run = mine.find((s) => s.name === "code_mode.session.run")!;
    expect(run.parentSpanId).toBe(toolsCall.spanId);
    expect(mine.find((s) => s.name === "execute_tool echo.say")!.parentSpanId).toBe(run.spanId);
  }, 120_000);
});
