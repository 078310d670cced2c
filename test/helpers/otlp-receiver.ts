/**
 * A tiny OTLP/HTTP receiver on 127.0.0.1: accepts the JSON exports of traces (/v1/traces) and
 * metrics (/v1/metrics) that the SDK's OTLP/HTTP exporters send, and keeps them flat for tests.
 * It also answers GET /hello?name=... as a service an HTTP tool calls, recording the trace
 * context each request carried (traceparent).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  service: string | undefined;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Metric names received, with their data points' attributes. */
  metrics: Map<string, Array<Record<string, unknown>>>;
  /** The traceparent of each /hello request, in order. */
  helloTraceparents: Array<string | undefined>;
  /** Content types of the export requests (the exporter's encoding). */
  contentTypes: Set<string>;
  close: () => Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

const valueOf = (v: AnyValue): unknown => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue;
const attrs = (list: KeyValue[] | undefined): Record<string, unknown> => Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metrics = new Map<string, Array<Record<string, unknown>>>();
  const helloTraceparents: Array<string | undefined> = [];
  const contentTypes = new Set<string>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://x");
      if (req.method === "GET" && url.pathname === "/hello") {
        const tp = req.headers.traceparent;
        helloTraceparents.push(Array.isArray(tp) ? tp[0] : tp);
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ hello: url.searchParams.get("name") }));
        return;
      }
      if (req.method !== "POST" || (url.pathname !== "/v1/traces" && url.pathname !== "/v1/metrics")) {
        res.writeHead(404).end();
        return;
      }
      contentTypes.add(String(req.headers["content-type"]));
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      } catch {
        res.writeHead(400).end();
        return;
      }
      if (url.pathname === "/v1/traces") {
        for (const rs of (body.resourceSpans ?? []) as Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }>) {
          const service = attrs(rs.resource?.attributes)["service.name"] as string | undefined;
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              spans.push({
                traceId: String(s.traceId),
                spanId: String(s.spanId),
                parentSpanId: String(s.parentSpanId ?? ""),
                name: String(s.name),
                kind: Number(s.kind),
                attributes: attrs(s.attributes as KeyValue[] | undefined),
                service,
              });
            }
          }
        }
      } else {
        for (const rm of (body.resourceMetrics ?? []) as Array<{ scopeMetrics?: Array<{ metrics?: Array<Record<string, unknown>> }> }>) {
          for (const sm of rm.scopeMetrics ?? []) {
            for (const m of sm.metrics ?? []) {
              const data = (m.sum ?? m.histogram ?? m.gauge) as { dataPoints?: Array<{ attributes?: KeyValue[] }> } | undefined;
              const list = metrics.get(String(m.name)) ?? [];
              for (const p of data?.dataPoints ?? []) list.push(attrs(p.attributes));
              metrics.set(String(m.name), list);
            }
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    spans,
    metrics,
    helloTraceparents,
    contentTypes,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Waits (polling, up to `timeoutMs`) until `ready()` holds. */
export async function waitFor(ready: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
