/**
 * `--otel` (run, mcp, serve, agent run): register the OpenTelemetry SDK with the OTLP/HTTP exporter
 * (src/telemetry/sdk.ts) before the command works, and export what is batched before the process
 * exits. `--otel-content CHARS` also records code, tool arguments and results, each cut to CHARS.
 */
import type { Command } from "commander";
import { configureTelemetry, MAX_CONTENT_CHARS } from "../telemetry/content.js";
import { CliUsageError, onExit } from "./shared.js";

export interface OtelFlags {
  otel?: boolean;
  otelContent?: string;
}

export function addOtelOptions(cmd: Command): Command {
  return cmd
    .option(
      "--otel",
      "send OpenTelemetry traces and metrics over OTLP/HTTP, configured by the standard environment variables: OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318), OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, ... (docs/telemetry.md)",
    )
    .option("--otel-content <chars>", `with --otel: also record the code, tool arguments and results in spans, each cut to CHARS characters (1-${MAX_CONTENT_CHARS}); default none`);
}

/** Registers the SDK when --otel was given; its shutdown (a last export) runs before the process exits. */
export async function startOtel(flags: OtelFlags): Promise<void> {
  if (flags.otelContent !== undefined && !flags.otel) throw new CliUsageError("--otel-content needs --otel");
  if (!flags.otel) return;
  if (flags.otelContent !== undefined) {
    const n = Number(flags.otelContent);
    if (!Number.isInteger(n) || n < 1 || n > MAX_CONTENT_CHARS) throw new CliUsageError(`--otel-content must be a whole number from 1 to ${MAX_CONTENT_CHARS}; got ${flags.otelContent}`);
    configureTelemetry({ content: { maxChars: n } });
  }
  const { registerOtlpSdk } = await import("../telemetry/sdk.js");
  const sdk = await registerOtlpSdk();
  onExit(() => sdk.shutdown());
}
