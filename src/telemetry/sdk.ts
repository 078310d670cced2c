/**
 * `--otel`: the OpenTelemetry SDK registered for this process, exporting traces and metrics over
 * OTLP/HTTP (JSON) configured by the standard environment variables — OTEL_EXPORTER_OTLP_ENDPOINT
 * (default http://localhost:4318), OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT,
 * OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_* (span
 * batching), OTEL_METRIC_EXPORT_INTERVAL, OTEL_SDK_DISABLED. The SDK packages are optional
 * dependencies, loaded only here.
 */

export interface RegisteredSdk {
  /** Exports what is still batched and unregisters; bounded by `timeoutMs`. */
  shutdown: (timeoutMs?: number) => Promise<void>;
}

/** The optional packages `--otel` loads (named in the error when one is missing). */
export const OTEL_SDK_PACKAGES = [
  "@opentelemetry/api",
  "@opentelemetry/core",
  "@opentelemetry/resources",
  "@opentelemetry/sdk-trace-base",
  "@opentelemetry/sdk-metrics",
  "@opentelemetry/context-async-hooks",
  "@opentelemetry/exporter-trace-otlp-http",
  "@opentelemetry/exporter-metrics-otlp-http",
] as const;

export class TelemetrySetupError extends Error {
  override readonly name = "TelemetrySetupError";
}

const DEFAULT_METRIC_INTERVAL_MS = 60_000;

export async function registerOtlpSdk(env: NodeJS.ProcessEnv = process.env): Promise<RegisteredSdk> {
  if ((env.OTEL_SDK_DISABLED ?? "").toLowerCase() === "true") return { shutdown: async () => {} };
  let mods;
  try {
    mods = await Promise.all([
      import("@opentelemetry/api"),
      import("@opentelemetry/core"),
      import("@opentelemetry/resources"),
      import("@opentelemetry/sdk-trace-base"),
      import("@opentelemetry/sdk-metrics"),
      import("@opentelemetry/context-async-hooks"),
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/exporter-metrics-otlp-http"),
    ]);
  } catch (err) {
    throw new TelemetrySetupError(
      `--otel needs the OpenTelemetry SDK packages (optional peer dependencies of ts-code-mode), which could not be loaded: ${(err as Error).message}. Install them: npm install ${OTEL_SDK_PACKAGES.join(" ")}`,
    );
  }
  const [api, core, resources, traceSdk, metricsSdk, asyncHooks, traceExporter, metricExporter] = mods;
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ "service.name": "ts-code-mode" }))
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over ours.
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const tracerProvider = new traceSdk.BasicTracerProvider({
    resource,
    spanProcessors: [new traceSdk.BatchSpanProcessor(new traceExporter.OTLPTraceExporter())],
  });
  const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
  const meterProvider = new metricsSdk.MeterProvider({
    resource,
    readers: [
      new metricsSdk.PeriodicExportingMetricReader({
        exporter: new metricExporter.OTLPMetricExporter(),
        exportIntervalMillis: Number.isFinite(interval) && interval > 0 ? interval : DEFAULT_METRIC_INTERVAL_MS,
      }),
    ],
  });
  api.context.setGlobalContextManager(new asyncHooks.AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(new core.CompositePropagator({ propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()] }));
  api.trace.setGlobalTracerProvider(tracerProvider);
  api.metrics.setGlobalMeterProvider(meterProvider);
  let done: Promise<void> | undefined;
  return {
    shutdown: (timeoutMs = 10_000) =>
      (done ??= (async () => {
        // An unreachable collector must not hold the process: give up after timeoutMs.
        let timer: ReturnType<typeof setTimeout> | undefined;
        const giveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
        await Promise.race([Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]), giveUp]);
        clearTimeout(timer);
        api.trace.disable();
        api.metrics.disable();
        api.propagation.disable();
        api.context.disable();
      })()),
  };
}
