/**
 * Spans through `@opentelemetry/api` only. `inSpan(...)` runs `fn` inside a new active span when an
 * SDK is registered, and runs it bare (span undefined) when none is: the no-SDK cost is one global
 * lookup (see api.ts).
 */
import type { Attributes, Context, Span, SpanKind, Tracer } from "@opentelemetry/api";
import { liveApi, type OtelApi } from "./api.js";
import type { TraceContext } from "./trace-context.js";
import { ATTR, SCOPE } from "./names.js";

export type { Attributes, Span };

export type { TraceContext };

export interface SpanOptions {
  kind?: "server" | "client" | "internal";
  /** Parent context; default the active one. */
  parent?: TraceContext | undefined;
}

const KIND: Record<NonNullable<SpanOptions["kind"]>, SpanKind> = { internal: 0, server: 1, client: 2 };

let tracerCache: { provider: unknown; tracer: Tracer } | undefined;

function tracerOf(api: OtelApi): Tracer {
  const provider = api.trace.getTracerProvider();
  if (tracerCache?.provider !== provider) tracerCache = { provider, tracer: provider.getTracer(SCOPE) };
  return tracerCache.tracer;
}

/**
 * Runs `fn` in a span named `name`. A rejection ends the span with status ERROR, `error.type` and
 * the exception recorded, and is rethrown; callers whose failures are values (an ExecutionResult)
 * mark them with `failSpan`.
 */
export function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span | undefined) => Promise<T>, options: SpanOptions = {}): Promise<T> {
  const api = liveApi();
  if (!api) return fn(undefined);
  const parent = (options.parent as Context | undefined) ?? api.context.active();
  return tracerOf(api).startActiveSpan(name, { kind: KIND[options.kind ?? "internal"], attributes }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Status ERROR with `error.type` (the error's stable name, or its ToolError code's owner) and the message. */
export function failSpan(span: Span, err: unknown, recordException = true): void {
  // An Error, or an ExecutionResult's plain { name, message }.
  const o = typeof err === "object" && err !== null ? (err as { name?: unknown; message?: unknown }) : {};
  const e = { name: typeof o.name === "string" ? o.name : "Error", message: typeof o.message === "string" ? o.message : String(err) };
  span.setAttribute(ATTR.errorType, e.name || "Error");
  span.setStatus({ code: 2, message: e.message.slice(0, 1_000) });
  if (recordException && err instanceof Error) span.recordException(err);
}

/** The active context, to parent later spans with (undefined without an SDK). */
export function captureTraceContext(): TraceContext | undefined {
  return liveApi()?.context.active() as TraceContext | undefined;
}

/** Runs `fn` with `ctx` active (as is without an SDK or context). */
export function withTraceContext<T>(ctx: TraceContext | undefined, fn: () => T): T {
  const api = liveApi();
  return api && ctx ? api.context.with(ctx as unknown as Context, fn) : fn();
}
