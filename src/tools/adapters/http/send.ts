/**
 * Send one prepared request with Node's built-in fetch and turn the outcome into a value or a
 * ToolError, with the limits every HTTP call needs: a timeout combined with the caller's abort
 * signal, a response size cap, bounded error excerpts, and no secret in any message.
 *
 * Redirects are followed here (at most MAX_REDIRECTS) rather than by fetch, so that headers
 * carrying secrets are dropped when a redirect leads to another origin: fetch itself would only
 * drop `Authorization` and would forward e.g. an `X-Api-Key` to wherever the server points.
 */
import { ToolError, type ToolErrorCode } from "../../../errors.js";
import type { PreparedRequest } from "./request.js";
import { bodyKind, decodeBody, decodeText, InvalidJsonError, mediaType, readBounded } from "./response.js";
import { displayUrl, redact } from "./secrets.js";
import { injectTraceHeaders } from "../../../telemetry/propagation.js";

/** A response body beyond this many bytes fails the call: an agent cannot use more, and memory is finite. */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
/** How much of an error response body goes into a ToolError. */
export const BODY_EXCERPT_CHARS = 1_000;
/** How much of an error body is read at most (the excerpt is cut from it after redaction). */
const ERROR_BODY_READ_BYTES = 64 * 1024;
export const MAX_REDIRECTS = 5;
/** setTimeout (behind AbortSignal.timeout) cannot wait longer than this. */
const MAX_TIMER_MS = 2_147_483_647;
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

export interface SendOptions {
  tool: string;
  callable: string;
  timeoutMs: number;
  signal?: AbortSignal;
  maxResponseBytes?: number;
  /** Values to redact from every message (see secrets.ts). */
  secrets: readonly string[];
  /** Lower-case names of headers not sent on to another origin by a redirect. */
  secretHeaders: ReadonlySet<string>;
}

/** ToolError code for an HTTP error status. */
export function codeForStatus(status: number): ToolErrorCode {
  if (status === 400 || status === 422) return "INVALID_INPUT";
  if (status === 401 || status === 403) return "PERMISSION";
  if (status === 404) return "NOT_FOUND";
  if (status === 409) return "CONFLICT";
  if (status === 412) return "PRECONDITION";
  if (status === 408 || status === 504) return "TIMEOUT";
  if (status >= 500) return "DEPENDENCY";
  return "INTERNAL";
}

function capText(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return mib >= 1 ? `${Math.round(mib * 100) / 100} MiB` : `${bytes} bytes`;
}

/** The innermost useful reason of a fetch failure ("fetch failed" says nothing; its cause does). */
function networkReason(e: unknown): string {
  let cause: unknown = e instanceof Error && e.cause !== undefined ? e.cause : e;
  if (cause instanceof AggregateError && cause.errors.length > 0) cause = cause.errors[0];
  const code = (cause as NodeJS.ErrnoException | null)?.code;
  const message = cause instanceof Error ? cause.message : String(cause);
  const hint =
    code === "ECONNREFUSED" ? " (nothing is listening there; is the service running?)"
    : code === "ENOTFOUND" || code === "EAI_AGAIN" ? " (the host name does not resolve)"
    : "";
  return `${message || code || "network error"}${hint}`;
}

/** Resolve to the response value (JSON, text, bytes or null); reject with a ToolError. */
export async function sendRequest(req: PreparedRequest, opts: SendOptions): Promise<unknown> {
  const { tool, callable } = opts;
  const label = `tools.${tool}.${callable}`;
  const cap = opts.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const timeoutMs = Math.min(Math.max(1, Math.floor(opts.timeoutMs)), MAX_TIMER_MS);
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;

  let method: string = req.method;
  let url = req.url;
  // The call's trace context goes on (traceparent): the service's spans join the agent's trace.
  let headers = injectTraceHeaders({ ...req.headers });
  let body = req.body;
  const where = () => `${method} ${displayUrl(url)}`;
  // Every message passes through redact(): a secret may come back inside a server's or Node's text.
  const error = (code: ToolErrorCode, message: string, extra: { status?: number; stderr?: string } = {}) =>
    new ToolError({ tool, callable, code, message: redact(message, opts.secrets), ...extra });

  /** The error for a stopped request, or null when nothing aborted it. */
  const stopped = (): ToolError | null => {
    if (!signal.aborted) return null;
    const external = opts.signal;
    if (external?.aborted && signal.reason === external.reason) {
      const reason: unknown = external.reason;
      const timedOut = reason instanceof Error && reason.name === "TimeoutError";
      const why = reason instanceof Error && reason.message ? ` (${reason.message})` : "";
      return error(timedOut ? "TIMEOUT" : "INTERNAL", `${label}: ${where()} was aborted${why}; the request was cancelled`);
    }
    return error("TIMEOUT", `${label}: ${where()} timed out after ${timeoutMs} ms; the request was cancelled`);
  };
  const failure = (e: unknown, during: string): ToolError => {
    if (e instanceof ToolError) return e;
    return stopped() ?? error("DEPENDENCY", `${label}: ${where()} failed${during}: ${networkReason(e)}`);
  };

  const early = stopped();
  if (early) throw early;

  for (let hop = 0; ; hop++) {
    let res: Response;
    try {
      const init: RequestInit = { method, headers, redirect: "manual", signal };
      if (body !== undefined) init.body = body;
      res = await fetch(url, init);
    } catch (e) {
      throw failure(e, "");
    }

    const location = REDIRECT_STATUSES.has(res.status) ? res.headers.get("location") : null;
    if (location !== null) {
      await res.body?.cancel().catch(() => undefined);
      if (hop >= MAX_REDIRECTS) throw error("DEPENDENCY", `${label}: ${where()} was redirected more than ${MAX_REDIRECTS} times`, { status: res.status });
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw error("DEPENDENCY", `${label}: ${where()} was redirected to an invalid URL`, { status: res.status });
      }
      if (next.protocol !== "http:" && next.protocol !== "https:") {
        throw error("DEPENDENCY", `${label}: ${where()} was redirected to a ${next.protocol} URL, which is not followed`, { status: res.status });
      }
      // As browsers do: 303 (and 301/302 after a POST) continue as a GET without the body.
      if ((res.status === 303 && method !== "HEAD") || ((res.status === 301 || res.status === 302) && method === "POST")) {
        method = "GET";
        body = undefined;
        delete headers["content-type"];
      }
      if (next.origin !== url.origin) {
        headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !opts.secretHeaders.has(k.toLowerCase())));
      }
      url = next;
      continue;
    }

    if (res.status >= 400) {
      let excerpt = "";
      try {
        const { bytes, truncated } = await readBounded(res.body, ERROR_BODY_READ_BYTES);
        const contentType = res.headers.get("content-type");
        if (bodyKind(contentType) === "binary") excerpt = `(${truncated ? "more than " : ""}${bytes.byteLength} bytes of ${mediaType(contentType)})`;
        else excerpt = redact(decodeText(bytes, contentType), opts.secrets).trim();
      } catch (e) {
        const s = stopped();
        if (s) throw s;
        excerpt = `(the body could not be read: ${networkReason(e)})`;
      }
      if (excerpt.length > BODY_EXCERPT_CHARS) excerpt = `${excerpt.slice(0, BODY_EXCERPT_CHARS - 1)}…`;
      const statusText = `${res.status}${res.statusText ? ` ${res.statusText}` : ""}`;
      const extra = excerpt ? { status: res.status, stderr: excerpt } : { status: res.status };
      throw error(codeForStatus(res.status), `${label}: ${where()} returned ${statusText}${excerpt ? `: ${excerpt}` : ""}`, extra);
    }

    if (res.status === 204 || res.status === 205 || res.status === 304 || method === "HEAD") {
      await res.body?.cancel().catch(() => undefined);
      return null;
    }

    const tooLarge = () =>
      error("INTERNAL", `${label}: ${where()} returned more than ${capText(cap)} (the response size cap); the rest was not read. Ask for less (paging, filters, fields).`, {
        status: res.status,
      });
    const declared = Number(res.headers.get("content-length") ?? Number.NaN);
    if (Number.isFinite(declared) && declared > cap) {
      await res.body?.cancel().catch(() => undefined);
      throw tooLarge();
    }
    let read: { bytes: Uint8Array; truncated: boolean };
    try {
      read = await readBounded(res.body, cap);
    } catch (e) {
      throw failure(e, " while reading the response");
    }
    if (read.truncated) throw tooLarge();

    const contentType = res.headers.get("content-type");
    try {
      return decodeBody(read.bytes, contentType);
    } catch (e) {
      if (!(e instanceof InvalidJsonError)) throw e;
      const start = decodeText(read.bytes.subarray(0, 200), contentType).trim();
      throw error("DEPENDENCY", `${label}: ${where()} returned invalid JSON (content-type ${mediaType(contentType)}): ${e.message}; the body starts: ${start}`, {
        status: res.status,
      });
    }
  }
}
