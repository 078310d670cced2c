/**
 * Serving MCP over stdin/stdout. Stdout is the protocol stream: one stray byte (a library's
 * console.log, or agent code under the in-process executor calling process.stdout.write) would
 * corrupt it and the client would drop the connection. So the server claims stdout: the protocol
 * gets a private handle on the real stream, and `process.stdout.write` is re-routed to stderr for
 * as long as the server runs.
 */
import type { Readable } from "node:stream";
import { Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Session } from "../session.js";
import { buildCodeModeServer, stderrLog, type CodeModeServerOptions } from "./server.js";

export interface StdioServeOptions extends CodeModeServerOptions {
  /** Default process.stdin. */
  stdin?: Readable;
  /** Default: the process's stdout, claimed (see the module comment). A stream given here is used as is. */
  stdout?: Writable;
  /**
   * Called once when the client's handshake is done: right after the answer to its first
   * `tools/list` went out, or HANDSHAKE_GRACE_MS after its `initialized` notification if it does
   * not list tools by then (or when the client leaves first). Work started here (an executor's
   * child process, tool files) does not delay what a client waits for before its first call.
   */
  onHandshakeDone?: () => void;
}

/** How long after `initialized` a client that has not sent tools/list counts as done with the handshake. */
export const HANDSHAKE_GRACE_MS = 100;

export interface StdioServing {
  /** The MCP tool names offered. */
  tools: string[];
  /** Resolves when the client closes stdin (or `close()` was called). */
  closed: Promise<void>;
  /** Stops serving; the Session stays open (it belongs to the caller). Idempotent. */
  close(): Promise<void>;
}

export async function serveStdio(session: Session, options: StdioServeOptions = {}): Promise<StdioServing> {
  const log = options.log ?? stderrLog;
  const stdin = options.stdin ?? process.stdin;
  const claimed = options.stdout ? null : claimStdout();
  const stdout = options.stdout ?? claimed!.protocol;
  const { server, tools, close: closeOwn } = buildCodeModeServer(session, { ...options, log });

  let finish!: () => void;
  const closed = new Promise<void>((resolve) => (finish = resolve));
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      stdin.off("end", onEnd);
      stdin.off("close", onEnd);
      await server.close().catch((err: unknown) => log(`closing the MCP server failed: ${String(err)}`));
      await closeOwn().catch((err: unknown) => log(`closing the other language's session failed: ${String(err)}`));
      claimed?.release();
      finish();
    })());
  const onEnd = () => void close();
  stdin.once("end", onEnd);
  stdin.once("close", onEnd);
  // The client went away mid-write (EPIPE): nobody is listening any more.
  stdout.on("error", (err) => {
    log(`stdout failed (${err.message}); stopping`);
    void close();
  });
  server.server.onclose = () => void close();
  const transport = new StdioServerTransport(stdin, stdout);
  await server.connect(transport);
  if (options.onHandshakeDone) watchHandshake(transport, options.onHandshakeDone, closed);
  return { tools, closed, close };
}

/**
 * Calls `done` once: after the response to the first tools/list is sent, HANDSHAKE_GRACE_MS after
 * `initialized` without one, or when serving ends. Wraps the transport's two hooks after connect()
 * set them (the SDK reads them on every message); the wrappers only look at method and id.
 */
function watchHandshake(transport: StdioServerTransport, done: () => void, closed: Promise<void>): void {
  let fired = false;
  let grace: NodeJS.Timeout | undefined;
  let listId: string | number | undefined;
  const fire = () => {
    if (fired) return;
    fired = true;
    clearTimeout(grace);
    done();
  };
  void closed.then(fire);
  const onmessage = transport.onmessage;
  transport.onmessage = (message) => {
    if (!fired && "method" in message) {
      if (message.method === "notifications/initialized") grace ??= setTimeout(fire, HANDSHAKE_GRACE_MS).unref();
      else if (message.method === "tools/list" && "id" in message && listId === undefined) listId = message.id;
    }
    onmessage?.(message);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message) => {
    await send(message);
    if (!fired && listId !== undefined && "id" in message && message.id === listId && !("method" in message)) setImmediate(fire);
  };
}

type WriteCallback = (err?: Error | null) => void;

/**
 * A private writable on the real stdout for the protocol, and `process.stdout.write` re-routed to
 * stderr until `release()`. Writes through the returned stream keep their order and backpressure.
 */
export function claimStdout(): { protocol: Writable; release(): void } {
  const stdout = process.stdout;
  const original = stdout.write;
  const realWrite = original.bind(stdout) as (chunk: string | Uint8Array, cb: WriteCallback) => boolean;
  const protocol = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      realWrite(chunk, (err) => callback(err ?? null));
    },
  });
  const toStderr = (chunk: string | Uint8Array, encodingOrCb?: BufferEncoding | WriteCallback, cb?: WriteCallback): boolean =>
    typeof encodingOrCb === "function" ? process.stderr.write(chunk, encodingOrCb) : process.stderr.write(chunk, encodingOrCb as BufferEncoding, cb);
  stdout.write = toStderr as typeof stdout.write;
  let released = false;
  return {
    protocol,
    release() {
      if (released) return;
      released = true;
      stdout.write = original;
    },
  };
}
