/**
 * Real in-process tool adapters for tests and benchmarks: they implement the ToolAdapter contract
 * the same way the CLI/MCP/HTTP adapters do, without a process spawn, so a test can observe how the
 * executor calls tools (how many at once, with what budget).
 */
import type { CallContext, ToolAdapter, ToolInfo } from "../../src/tools/protocol.js";

/** `probe.sleep({ ms })` waits and reports how many calls were in flight at its start; `probe.echo({ value })` returns value. */
export class ProbeAdapter implements ToolAdapter {
  readonly name = "probe";
  inFlight = 0;
  maxInFlight = 0;
  readonly contexts: CallContext[] = [];
  aborted = 0;

  async info(): Promise<ToolInfo> {
    return {
      name: "probe",
      type: "toolable",
      description: "Test probe: sleeps and echoes",
      tags: ["test"],
      direct: null,
      callables: [
        { name: "sleep", description: "Wait ms milliseconds", params: [{ name: "ms", type: "integer", required: true }], returns: "number" },
        { name: "echo", description: "Return the value", params: [{ name: "value", type: "unknown", required: true }], returns: "unknown" },
      ],
    };
  }

  async call(callable: string | null, args: Record<string, unknown>, ctx: CallContext): Promise<unknown> {
    this.contexts.push(ctx);
    if (callable === "echo") return args["value"];
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, Number(args["ms"]));
        ctx.signal?.addEventListener("abort", () => {
          clearTimeout(t);
          this.aborted++;
          reject(new Error("aborted"));
        });
      });
      return this.inFlight;
    } finally {
      this.inFlight--;
    }
  }

  async close(): Promise<void> {}
}
