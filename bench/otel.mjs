/**
 * Telemetry overhead (issue 39): what the instrumentation adds to one run and to one tool call,
 * `npm run bench:otel` (builds first) or `node bench/otel.mjs [--batches N]` against dist/.
 *
 * Measured on the instrumentation points themselves — traceRun (the session.run span and run
 * metrics) and traceNamespaceCall (the execute_tool span, its record, metrics) — around an
 * operation that does nothing, so the figure is the overhead alone, not a run's own cost:
 *   - no SDK registered: target <= 1 µs per run and per tool call;
 *   - the SDK with a BatchSpanProcessor exporting over OTLP/HTTP to a receiver on 127.0.0.1 and
 *     a meter provider: target <= 10 µs.
 * Each batch times N wrapped and N bare operations; the figure is the median over batches of
 * (wrapped - bare) / N, in microseconds.
 *
 *   stdout: one JSON line per case  {"case","sdk","median_us","p90_us","target_us","within_target"}
 */
import { createServer } from "node:http";
import { benchArgs } from "./lib.mjs";

const { values } = benchArgs(import.meta.url, { options: { batches: { type: "string", default: "31" }, per: { type: "string", default: "2000" } } });
const BATCHES = Number(values.batches);
const PER = Number(values.per);

const load = (m) => import(`../dist/telemetry/${m}.js`);
const [{ traceRun }, { traceNamespaceCall }] = await Promise.all([load("runs"), load("calls")]).catch((err) => {
  process.stderr.write(`bench: cannot load dist/telemetry (${err.message}); build first (npm run build)\n`);
  process.exit(2);
});

const result = { ok: true, value: 1, display: "1", stdout: "", stderr: "", error: null, durationMs: 0.1 };
const bareRun = () => Promise.resolve(result);
const bareCall = (_ctx) => Promise.resolve({ value: "ok", release() {} });
const language = () => "typescript";
const args = ["echo", "say", { text: ["hi"] }];
const ctx = { runId: "bench", holdDeadline: () => () => {} };

const CASES = [
  { name: "run", wrapped: () => traceRun("in-process", language, "1", bareRun), bare: bareRun },
  { name: "tool call", wrapped: () => traceNamespaceCall("tools", "call", args, ctx, "in-process", bareCall), bare: () => bareCall(ctx) },
];

async function time(fn) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < PER; i++) await fn();
  return Number(process.hrtime.bigint() - t0) / 1e3; // µs
}

function summary(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
  return { median: Math.round(at(50) * 1000) / 1000, p90: Math.round(at(90) * 1000) / 1000 };
}

async function measureAll(sdk, target) {
  for (const c of CASES) {
    // Warm up both paths (JIT, the API's lazy load, instrument creation).
    for (let i = 0; i < 3; i++) {
      await time(c.wrapped);
      await time(c.bare);
    }
    const samples = [];
    for (let b = 0; b < BATCHES; b++) {
      // Alternate the order so drift on a loaded machine does not favour one side.
      let wrapped, bare;
      if (b % 2) {
        wrapped = await time(c.wrapped);
        bare = await time(c.bare);
      } else {
        bare = await time(c.bare);
        wrapped = await time(c.wrapped);
      }
      samples.push((wrapped - bare) / PER);
    }
    const { median, p90 } = summary(samples);
    const row = { case: c.name, sdk, median_us: median, p90_us: p90, target_us: target, within_target: target === null ? null : median <= target };
    process.stdout.write(`${JSON.stringify(row)}\n`);
    process.stderr.write(`${c.name.padEnd(28)} ${sdk.padEnd(24)} median ${String(median).padStart(8)} µs   p90 ${String(p90).padStart(8)} µs   ${target === null ? "" : `target ${target} µs${row.within_target ? "" : "   MISSED"}`}\n`);
  }
}

await measureAll("none", 1);

// The SDK, as --otel registers it, exporting to a receiver on loopback that accepts and drops.
const receiver = createServer((req, res) => req.resume().on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}")));
await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${receiver.address().port}`;
const { registerOtlpSdk } = await load("sdk");
const sdk = await registerOtlpSdk();
await measureAll("sdk + batch OTLP/HTTP", 10);

// The floor on this machine: one bare span, and one counter + histogram record, through the same
// SDK (no target: what any instrumentation pays; a loaded machine shows here first).
const api = await import("@opentelemetry/api");
const tracer = api.trace.getTracer("bench-floor");
const meter = api.metrics.getMeter("bench-floor");
const counter = meter.createCounter("bench.floor.count");
const histogram = meter.createHistogram("bench.floor.duration");
CASES.length = 0;
CASES.push(
  { name: "floor: one span", wrapped: () => tracer.startActiveSpan("floor", { attributes: { a: "x" } }, async (s) => s.end()), bare: () => Promise.resolve() },
  { name: "floor: counter + histogram", wrapped: async () => { const at = { a: "x", b: true }; counter.add(1, at); histogram.record(0.001, at); }, bare: () => Promise.resolve() },
);
await measureAll("sdk (floor)", null);
await sdk.shutdown(5_000);
receiver.close();
receiver.closeAllConnections();
