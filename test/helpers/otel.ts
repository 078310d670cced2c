/**
 * The OpenTelemetry SDK with its in-memory exporter, registered in this test process as an
 * application would: tracer provider, AsyncLocalStorage context manager, W3C propagator, and a
 * meter provider with an in-memory metric exporter. `stop()` unregisters everything.
 */
import { context, metrics, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";

export interface InMemoryOtel {
  spans: () => ReadableSpan[];
  /** Spans named `name`. */
  named: (name: string) => ReadableSpan[];
  /** Collected metric points by instrument name: sums for counters, counts for histograms. */
  metricValues: () => Promise<Map<string, Array<{ attributes: Record<string, unknown>; value: number }>>>;
  tracer: ReturnType<typeof trace.getTracer>;
  reset: () => void;
  stop: () => Promise<void>;
}

export function registerInMemoryOtel(): InMemoryOtel {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    spans: () => exporter.getFinishedSpans(),
    named: (name) => exporter.getFinishedSpans().filter((s) => s.name === name),
    metricValues: async () => {
      const { resourceMetrics } = await reader.collect();
      const out = new Map<string, Array<{ attributes: Record<string, unknown>; value: number }>>();
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const m of scope.metrics) {
          out.set(
            m.descriptor.name,
            m.dataPoints.map((p) => ({ attributes: p.attributes, value: typeof p.value === "number" ? p.value : (p.value as { count: number }).count })),
          );
        }
      }
      return out;
    },
    tracer: trace.getTracer("test"),
    reset: () => exporter.reset(),
    stop: async () => {
      await provider.shutdown();
      await meterProvider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
      metrics.disable();
    },
  };
}

/** The parent span id of a span (SDK 2.x: parentSpanContext). */
export function parentId(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}
