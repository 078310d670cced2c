/**
 * The guest runtime every out-of-process executor runs: prepared snippets in a ReplEngine, every
 * namespace call sent to the host's RpcProvider. It knows nothing of how messages travel: the
 * subprocess child (child.ts) hands it Node's IPC channel, the container entry (../container/entry.ts)
 * a unix socket. It deliberately imports no compiler and no storage, which keeps start-up short and
 * leaves all authority over data with the host.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { ReplEngine, type EngineRunOptions } from "../repl/engine.js";
import { RpcClient } from "../rpc/client.js";
import { isHostMessage, SHARED_CHILD_ENV, type GuestToHost, type OutputMessage, type ResultMessage } from "../rpc/protocol.js";
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

/** One session's REPL in this guest: its context, its calls to the host, its run in progress. */
interface GuestSession {
  engine: ReplEngine;
  client: RpcClient;
  /** The run in progress and how to stop it while it waits (a StopMessage from the host). */
  current: { runId: number; stop: AbortController } | null;
}

export function startGuestRuntime(transport: GuestTransport): void {
  const { send } = transport;
  const shared = process.env[SHARED_CHILD_ENV] === "1";
  // Started with --trace-sigint (child-process.ts): the host interrupts at the deadline with SIGINT.
  // A shared child never is (a SIGINT would stop whichever session's script runs): vm's own timeout.
  const interrupt = process.execArgv.includes(SIGINT_INTERRUPT_FLAG) ? "sigint" : "timeout";
  const sessions = new Map<number | undefined, GuestSession>();
  const open = (session: number | undefined, importBases: string[]): GuestSession => {
    // A shared child's messages name their session; a child of one session sends them as before.
    // Object.assign, then set: on Node 20 adding a property to a spread copy takes V8's slow path (every call of a shared child's session).
    const tagged = session === undefined ? send : (m: GuestToHost) => send(Object.assign(Object.assign({}, m), { session }));
    const client = new RpcClient(tagged);
    // The host enforces the deadline of asynchronous code by killing this process.
    const engine = new ReplEngine({ call: client.call, onAsyncTimeout: "none", importBases, interrupt });
    const entry: GuestSession = { engine, client, current: null };
    sessions.set(session, entry);
    return entry;
  };
  if (!shared) open(undefined, importBasesFromEnv());

  // Which session's code is executing, across its awaits and timers, so that a direct write to
  // process.stdout lands in its own run's output. Only a shared child pays for the async tracking.
  const writer = shared ? new AsyncLocalStorage<ReplEngine>() : null;
  const single = (): ReplEngine | undefined => sessions.get(undefined)?.engine;

  // Direct writes to stdout/stderr belong to the current run's output, like console's.
  for (const stream of ["stdout", "stderr"] as const) {
    const target = process[stream];
    target.write = ((chunk: unknown, ...rest: unknown[]) => {
      (writer ? writer.getStore() : single())?.write(stream, typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8"));
      const done = rest.find((r) => typeof r === "function") as (() => void) | undefined;
      done?.();
      return true;
    }) as typeof target.write;
  }

  transport.onMessage((message: unknown) => {
    if (!isHostMessage(message)) return;
    if (message.type === "open") {
      const bases = message.importBases.length ? message.importBases : [process.cwd()];
      if (shared && message.session !== undefined && !sessions.has(message.session)) open(message.session, bases);
      // A child started before its session was known (node-child.ts): its context is made anew with
      // the session's folders, and its environment says them as a child started for it would.
      if (!shared && message.session === undefined && !sessions.get(undefined)?.current) {
        sessions.get(undefined)?.engine.dispose();
        process.env["TS_CODE_MODE_IMPORT_BASES"] = JSON.stringify(bases);
        open(undefined, bases);
      }
      return;
    }
    const entry = sessions.get(message.session);
    if (!entry) return;
    if (message.type === "close") {
      entry.current?.stop.abort("cancel");
      entry.engine.dispose();
      sessions.delete(message.session);
      return;
    }
    if (message.type === "reply") {
      entry.client.settle(message);
      return;
    }
    if (message.type === "stop") {
      // Read only when the guest is idle; one for an earlier run is stale and ignored.
      if (entry.current?.runId === message.runId) entry.current.stop.abort(message.reason);
      return;
    }
    const { runId } = message;
    const { session } = message;
    const stop = new AbortController();
    entry.current = { runId, stop };
    let interrupted = false;
    // Properties set, not spread in: on Node 20 a spread followed by more properties takes V8's slow path (microseconds, every run).
    const options: EngineRunOptions = { stop: stop.signal, onInterrupted: () => void (interrupted = true) };
    // Output chunks are batched by the engine (output-stream.ts) and all sent before the result.
    if (message.stream) {
      options.onOutput = (c: OutputChunk) => {
        const chunk: OutputMessage = { type: "output", runId, stream: c.stream, text: c.text };
        if (session !== undefined) chunk.session = session;
        send(chunk);
      };
    }
    const { engine } = entry;
    const run = () => engine.run(message.script, message.timeoutMs, options);
    void (writer ? writer.run(engine, run) : run()).then((result) => {
      if (entry.current?.runId === runId) entry.current = null;
      // Cut to the host's limits (an error's message may be any length): the host refuses larger messages.
      // `interrupted`: this run took the host's SIGINT, so none is left to reach a later run.
      const done: ResultMessage = { type: "result", runId, result: fitResult(result) };
      if (interrupted) done.interrupted = true;
      if (session !== undefined) done.session = session;
      send(done);
    });
  });

  // A floating rejected promise is reported in the run's stderr (or the next run's) instead of ending the process.
  process.on("unhandledRejection", (reason, promise) => {
    // Guest errors come from the vm context's realm, so `instanceof Error` would be false here.
    const e = reason as { name?: unknown; message?: unknown } | null;
    const text = typeof e === "object" && e !== null && typeof e.message === "string" ? `${String(e.name)}: ${e.message}` : renderDisplay(reason, 2_000);
    // In a shared child, the session whose context made the promise; a host-made one, nobody's.
    const owner = shared ? [...sessions.values()].find((s) => s.engine.owns(promise))?.engine : single();
    owner?.report(`Unhandled promise rejection: ${text}\n`);
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
