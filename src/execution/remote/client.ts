/**
 * HTTP to a `serve` instance, for RemoteExecutor. Every request has a deadline, and a server that
 * is gone (refused, reset, silent past the deadline, or no longer knowing the session) becomes a
 * SessionLostError, never a hang. Replies are read up to a size cap: the server is another machine
 * and its answers are input like any other.
 */
import { InvalidNameError, NotFoundError, SessionLostError, StorageError, ToolError, ValidationError, type ToolErrorCode } from "../../errors.js";
import type { OutputChunk } from "../output-stream.js";
import { injectTraceHeaders } from "../../telemetry/propagation.js";

/** Largest reply body read (a run's value, a namespace reply). */
export const MAX_REPLY_BYTES = 256 * 1_048_576;

export interface RequestOptions {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  json?: unknown;
  timeoutMs: number;
  /** Read `text/event-stream` and hand `output` events to this listener; the `result` event is the reply. */
  onOutput?: (chunk: OutputChunk) => void;
}

/** Statuses a proxy answers when no server behind it took the request (haproxy, nginx, a cloud load balancer). */
const GATEWAY_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

export class RemoteClient {
  /**
   * `headers` go with every request (the caller's own, and the workspace header once known); the
   * caller has already refused the ones this client sets itself.
   */
  constructor(
    readonly baseUrl: string,
    private readonly token: string | undefined,
    readonly headers: Record<string, string> = {},
  ) {}

  async request(options: RequestOptions): Promise<unknown> {
    const headers: Record<string, string> = { ...this.headers, accept: options.onOutput ? "text/event-stream" : "application/json" };
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    if (options.json !== undefined) headers["content-type"] = "application/json";
    // The server's spans (the run, its tool calls) join the caller's trace.
    injectTraceHeaders(headers);
    const deadline = AbortSignal.timeout(options.timeoutMs);
    let response: Response;
    try {
      response = await fetch(new URL(options.path, this.baseUrl), {
        method: options.method,
        headers,
        ...(options.json !== undefined ? { body: JSON.stringify(options.json) } : {}),
        signal: deadline,
        // The token must never follow a redirect to another host.
        redirect: "error",
      });
      if (options.onOutput && response.ok && (response.headers.get("content-type") ?? "").includes("text/event-stream")) {
        return await readEvents(response, options.onOutput);
      }
      const text = await readBounded(response);
      if (!response.ok && GATEWAY_STATUSES.has(response.status) && !isJson(text)) throw this.gatewayError(response.status, options);
      const body = parseJson(text, response.status);
      if (!response.ok) throw errorFromReply(body, response.status, this.baseUrl);
      return body;
    } catch (err) {
      throw this.lost(err, deadline, options);
    }
  }

  /**
   * A proxy's own error page (not the server's JSON): no server behind it could take the request.
   * For a session's request that means the server holding it is gone (a sticky proxy cannot send
   * it elsewhere); for a new session, that no server is up.
   */
  private gatewayError(status: number, options: RequestOptions): Error {
    const what = `a proxy in front of ${this.baseUrl} answered HTTP ${status} to ${options.method} ${options.path}: no server behind it took the request`;
    if (options.path.startsWith("sessions/")) return new SessionLostError(`The remote session is lost: ${what}. Its variables are gone; stored data is not. Open a new session.`);
    return new Error(`${what}. Check that a \`ts-code-mode serve\` is running behind the proxy (its GET /health answers).`);
  }

  /** Network failures and deadlines become SessionLostError; the server's own errors pass through. */
  private lost(err: unknown, deadline: AbortSignal, options: RequestOptions): Error {
    if (err instanceof Error && !(err instanceof TypeError) && err.name !== "AbortError" && err.name !== "TimeoutError") return err;
    const why = deadline.aborted
      ? `it did not answer ${options.method} ${options.path} within ${options.timeoutMs} ms`
      : `the connection failed (${describeCause(err)})`;
    return new SessionLostError(`The remote session at ${this.baseUrl} is lost: ${why}. Its variables are gone; stored data is not. Open a new session.`);
  }
}

function describeCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } } | null)?.cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

async function readBounded(response: Response): Promise<string> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > MAX_REPLY_BYTES) throw new ValidationError(`the server's reply is ${declared} bytes; at most ${MAX_REPLY_BYTES} are read`);
  if (!response.body) return "";
  const decoder = new TextDecoder();
  let size = 0;
  let text = "";
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_REPLY_BYTES) throw new ValidationError(`the server's reply is larger than ${MAX_REPLY_BYTES} bytes; it was not read`);
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function parseJson(text: string, status: number): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`the server answered HTTP ${status} with something that is not JSON: ${text.slice(0, 200)}`);
  }
}

/** Server-sent events: `output` events go to the listener, the `result` event's data is returned. */
async function readEvents(response: Response, onOutput: (chunk: OutputChunk) => void): Promise<unknown> {
  const decoder = new TextDecoder();
  let buffer = "";
  let total = 0;
  let result: unknown;
  const handle = (block: string) => {
    let event = "message";
    let data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data += (data ? "\n" : "") + line.slice(5).replace(/^ /, "");
    }
    if (event === "output") {
      const chunk = JSON.parse(data) as OutputChunk;
      if ((chunk.stream === "stdout" || chunk.stream === "stderr") && typeof chunk.text === "string") {
        try {
          onOutput({ stream: chunk.stream, text: chunk.text });
        } catch {
          // The listener's problem, not the run's.
        }
      }
    } else if (event === "result") result = JSON.parse(data) as unknown;
  };
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.byteLength;
    if (total > MAX_REPLY_BYTES) throw new ValidationError(`the server's event stream is larger than ${MAX_REPLY_BYTES} bytes; it was not read further`);
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n/g, "\n");
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      handle(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
    }
  }
  if (result === undefined) throw new TypeError("the server's event stream ended without a result");
  return result;
}

/**
 * The server's `{ error: { name, message, details } }` as an error of the same class where there is
 * one. A refused token also says where the client's token comes from: the server's message can
 * only name the server's side.
 */
export function errorFromReply(body: unknown, status: number, baseUrl = "the server"): Error {
  const e = (body as { error?: { name?: unknown; message?: unknown; details?: Record<string, unknown> } } | null)?.error;
  const name = typeof e?.name === "string" ? e.name : "Error";
  let message = typeof e?.message === "string" ? e.message : `the server answered HTTP ${status}`;
  if (status === 401) message = `${baseUrl} refused the token: ${message}. Give RemoteExecutor the server's token (on the command line: --token or TS_CODE_MODE_TOKEN for run --remote, --remote-token or TS_CODE_MODE_REMOTE_TOKEN for mcp --remote)`;
  const details = e?.details ?? {};
  switch (name) {
    case "NotFoundError":
      return new NotFoundError(message, Array.isArray(details.suggestions) ? details.suggestions.filter((s): s is string => typeof s === "string") : []);
    case "ValidationError":
      return new ValidationError(message);
    case "InvalidNameError":
      return new InvalidNameError(message);
    case "StorageError":
      return new StorageError(message);
    case "SessionLostError":
      return new SessionLostError(message);
    case "ToolError":
      return new ToolError({
        tool: typeof details.tool === "string" ? details.tool : "",
        callable: typeof details.callable === "string" ? details.callable : null,
        code: (typeof details.code === "string" ? details.code : "INTERNAL") as ToolErrorCode,
        message,
        ...(typeof details.exitCode === "number" ? { exitCode: details.exitCode } : {}),
      });
    default: {
      const err = new Error(message);
      Object.defineProperty(err, "name", { value: name, configurable: true, writable: true });
      return err;
    }
  }
}
