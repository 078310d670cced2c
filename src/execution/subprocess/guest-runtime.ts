/**
 * The guest runtime every out-of-process executor runs: prepared snippets in a ReplEngine, every
 * namespace call sent to the host's RpcProvider. It knows nothing of how messages travel: the
 * subprocess child (child.ts) hands it Node's IPC channel, the container entry (../container/entry.ts)
 * a unix socket. It deliberately imports no compiler and no storage, which keeps start-up short and
 * leaves all authority over data with the host.
 */
import { ReplEngine } from "../repl/engine.js";
import { RpcClient } from "../rpc/client.js";
import { isHostMessage, type GuestToHost } from "../rpc/protocol.js";
import { renderDisplay } from "../result.js";
import { toWireError } from "../wire-error.js";
import { fitError, fitResult } from "./message-limits.js";
import type { OutputChunk } from "../output-stream.js";
import { SIGINT_INTERRUPT_FLAG } from "./interrupt.js";

export interface GuestTransport {
  send(message: GuestToHost): void;
  /** Send, then call `done` once the message has left (used before exiting on a fatal error). */
  sendThen(message: GuestToHost, done: () => void): void;
  onMessage(listener: (message: unknown) => void): void;
  /** The host went away. */
  onDisconnect(listener: () => void): void;
}

export function startGuestRuntime(transport: GuestTransport): void {
  const { send } = transport;
  const client = new RpcClient(send);
  const engine = new ReplEngine({
    call: client.call,
    // The host enforces the deadline of asynchronous code by killing this process.
    onAsyncTimeout: "none",
    importBases: importBasesFromEnv(),
    // Started with --trace-sigint (child-process.ts): the host interrupts at the deadline with SIGINT.
    interrupt: process.execArgv.includes(SIGINT_INTERRUPT_FLAG) ? "sigint" : "timeout",
  });

  // Direct writes to stdout/stderr belong to the current run's output, like console's.
  for (const stream of ["stdout", "stderr"] as const) {
    const target = process[stream];
    target.write = ((chunk: unknown, ...rest: unknown[]) => {
      engine.write(stream, typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8"));
      const done = rest.find((r) => typeof r === "function") as (() => void) | undefined;
      done?.();
      return true;
    }) as typeof target.write;
  }

  // The run in progress and how to stop it while it waits (a StopMessage from the host).
  let current: { runId: number; stop: AbortController } | null = null;
  transport.onMessage((message: unknown) => {
    if (!isHostMessage(message)) return;
    if (message.type === "reply") {
      client.settle(message);
      return;
    }
    if (message.type === "stop") {
      // Read only when the guest is idle; one for an earlier run is stale and ignored.
      if (current?.runId === message.runId) current.stop.abort(message.reason);
      return;
    }
    // Cut to the host's limits (an error's message may be any length): the host refuses larger messages.
    const { runId } = message;
    // Output chunks are batched by the engine (output-stream.ts) and all sent before the result.
    const streaming = message.stream ? { onOutput: (c: OutputChunk) => send({ type: "output", runId, stream: c.stream, text: c.text }) } : {};
    const stop = new AbortController();
    current = { runId, stop };
    let interrupted = false;
    const onInterrupted = () => void (interrupted = true);
    void engine.run(message.script, message.timeoutMs, { ...streaming, stop: stop.signal, onInterrupted }).then((result) => {
      if (current?.runId === runId) current = null;
      // `interrupted`: this run took the host's SIGINT, so none is left to reach a later run.
      send({ type: "result", runId, result: fitResult(result), ...(interrupted ? { interrupted: true as const } : {}) });
    });
  });

  // A floating rejected promise is reported in the run's stderr (or the next run's) instead of ending the process.
  process.on("unhandledRejection", (reason) => {
    // Guest errors come from the vm context's realm, so `instanceof Error` would be false here.
    const e = reason as { name?: unknown; message?: unknown } | null;
    const text = typeof e === "object" && e !== null && typeof e.message === "string" ? `${String(e.name)}: ${e.message}` : renderDisplay(reason, 2_000);
    engine.report(`Unhandled promise rejection: ${text}\n`);
  });

  // An exception thrown from a timer or callback ends the process, after telling the host why.
  process.on("uncaughtException", (err) => {
    try {
      transport.sendThen({ type: "fatal", error: fitError(toWireError(err)) }, () => process.exit(70));
    } catch {
      process.exit(70);
    }
    setTimeout(() => process.exit(70), 200).unref();
  });

  // The host went away: nothing can reach us any more, so leave instead of lingering.
  transport.onDisconnect(() => process.exit(0));

  send({ type: "ready" });
}

function importBasesFromEnv(): string[] {
  try {
    const bases: unknown = JSON.parse(process.env["TS_CODE_MODE_IMPORT_BASES"] ?? "[]");
    return Array.isArray(bases) && bases.every((b) => typeof b === "string") && bases.length ? bases : [process.cwd()];
  } catch {
    return [process.cwd()];
  }
}
