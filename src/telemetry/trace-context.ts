/**
 * An opaque OpenTelemetry context captured at one point (a run's start) to parent spans started
 * elsewhere (its namespace calls, which arrive on an IPC listener outside the run's async context).
 * A type of its own, apart from spans.ts, so that public declarations which carry one (a tool
 * call's context) do not import `@opentelemetry/api`, an optional peer a consumer may not have.
 */
export type TraceContext = { readonly __otelContext: unique symbol };
