/**
 * The "done when": `ts-code-mode serve --otel` behind a traced client produces one trace
 * per request with the run and each tool call inside it, in an OTLP/HTTP receiver on loopback. The
 * client (this process, with the SDK's in-memory exporter) reaches the server through
 * RemoteExecutor, which sends its traceparent; the server's HTTP tool sends it on to a service on
 * 127.0.0.1. One trace id throughout: client → serve → HTTP tool.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { trace } from "@opentelemetry/api";
import { FileStorage, RemoteExecutor, Session } from "../../src/index.js";
import { cleanup, ensureBuilt, startServe, tempDir, TOKEN, type ServeProcess } from "../server/harness.js";
import { registerInMemoryOtel, type InMemoryOtel } from "../helpers/otel.js";
import { startOtlpReceiver, waitFor, type OtlpReceiver } from "../helpers/otlp-receiver.js";

let dir: string;
let receiver: OtlpReceiver;
let server: ServeProcess;
let otel: InMemoryOtel;

beforeAll(async () => {
  await ensureBuilt();
  receiver = await startOtlpReceiver();
  dir = await tempDir();
  await mkdir(path.join(dir, "tools"), { recursive: true });
  await writeFile(
    path.join(dir, "tools", "web.yaml"),
    `name: web\ntype: http\ndescription: Greeting service\nbase_url: ${receiver.url}\nendpoints:\n  hello:\n    method: GET\n    path: /hello\n    description: Greet\n    params:\n      name: { type: string, required: true, description: Who }\n`,
  );
  server = await startServe(["--otel", "--token", TOKEN, "--base", dir, "--executor", "subprocess"], {
    env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "100", OTEL_METRIC_EXPORT_INTERVAL: "500", OTEL_SERVICE_NAME: "serve-under-test" },
  });
  otel = registerInMemoryOtel();
}, 300_000);

afterAll(async () => {
  await otel?.stop();
  await server?.stop();
  await receiver?.close();
  if (dir) await cleanup(dir);
});

describe("serve --otel behind a traced client", () => {
  it("one trace per request: the server's request span, its run and each tool call, parented by the client's traceparent; the HTTP tool sends it on", async () => {
    const session = new Session({ storage: new FileStorage({ basePath: dir }), executor: new RemoteExecutor({ url: server.url, token: TOKEN }) });
    const traceIds: string[] = [];
    try {
      for (const who of ["ada", "bob"]) {
        await otel.tracer.startActiveSpan(`client ${who}`, async (span) => {
          traceIds.push(span.spanContext().traceId);
          const r = await session.run(`const a = await tools.web.hello({ name: "${who}" }); const b = await tools.web.hello({ name: "x" }); [a.hello, b.hello]`);
          expect(r.error).toBeNull();
          expect(r.value).toEqual([who, "x"]);
          span.end();
        });
      }
    } finally {
      await session.close();
    }
    expect(new Set(traceIds).size).toBe(2);
    for (const traceId of traceIds) {
      await waitFor(() => receiver.spans.filter((s) => s.traceId === traceId && s.name.startsWith("execute_tool")).length === 2, `the tool spans of trace ${traceId}`);
      const mine = receiver.spans.filter((s) => s.traceId === traceId);
      const requestSpan = mine.find((s) => s.name === "POST /sessions/:id/run");
      expect(requestSpan, JSON.stringify(mine.map((s) => s.name))).toBeDefined();
      expect(requestSpan!.kind).toBe(2); // SERVER in OTLP's enum
      expect(requestSpan!.service).toBe("serve-under-test");
      expect(requestSpan!.attributes).toMatchObject({ "http.request.method": "POST", "http.route": "/sessions/:id/run", "http.response.status_code": 200 });
      // Its parent is the client's session.run span (sent by RemoteExecutor), itself a child of the client's span.
      const clientRun = otel.named("code_mode.session.run").find((s) => s.spanContext().traceId === traceId);
      expect(requestSpan!.parentSpanId).toBe(clientRun!.spanContext().spanId);
      const run = mine.find((s) => s.name === "code_mode.session.run");
      expect(run!.parentSpanId).toBe(requestSpan!.spanId);
      expect(run!.attributes).toMatchObject({ "code_mode.executor": "subprocess", "code_mode.ok": true });
      const tools = mine.filter((s) => s.name === "execute_tool web.hello");
      expect(tools).toHaveLength(2);
      for (const t of tools) {
        expect(t.parentSpanId).toBe(run!.spanId);
        expect(t.attributes).toMatchObject({ "gen_ai.tool.name": "web.hello", "code_mode.tool.type": "http", "code_mode.ok": true });
      }
    }
    // The service the HTTP tool called got the same trace id, from the tool call's span.
    const seen = receiver.helloTraceparents.map((tp) => tp?.split("-")[1]);
    expect(seen).toEqual([traceIds[0], traceIds[0], traceIds[1], traceIds[1]]);
    const toolSpanIds = new Set(receiver.spans.filter((s) => s.name === "execute_tool web.hello").map((s) => s.spanId));
    for (const tp of receiver.helloTraceparents) expect(toolSpanIds.has(tp!.split("-")[2]!)).toBe(true);
    expect([...receiver.contentTypes].every((t) => t.startsWith("application/json"))).toBe(true);
  }, 120_000);

  it("a request without traceparent starts a trace of its own; metrics reach the receiver", async () => {
    const res = await fetch(new URL("sessions", server.url), { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const run = await fetch(new URL(`sessions/${id}/run`, server.url), { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify({ code: "6 * 7" }) });
    expect(((await run.json()) as { value: unknown }).value).toBe(42);
    await waitFor(() => receiver.spans.some((s) => s.name === "code_mode.session.run" && !otel.spans().some((c) => c.spanContext().traceId === s.traceId)), "a run in a trace of its own");
    const own = receiver.spans.find((s) => s.name === "code_mode.session.run" && !otel.spans().some((c) => c.spanContext().traceId === s.traceId))!;
    const request = receiver.spans.find((s) => s.spanId === own.parentSpanId)!;
    expect(request.name).toBe("POST /sessions/:id/run");
    expect(request.parentSpanId).toBe("");
    await waitFor(() => receiver.metrics.has("code_mode.runs") && receiver.metrics.has("code_mode.tool.calls") && receiver.metrics.has("code_mode.sessions.open"), "the metrics");
    expect(trace.getActiveSpan()).toBeUndefined();
  }, 120_000);
});
