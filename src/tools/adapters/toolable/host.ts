/**
 * What the host plugs into toolable calls: where progress/log/artifact events go, and who answers a
 * tool's sampling request (the tool asking the caller's LLM for a completion). Given to
 * `ToolRegistry.load(path, { toolable })` (or `toolableFactory`), so every executor that uses the
 * registry gets them.
 */
import type { ToolableEventBody } from "./envelope.js";

export interface ToolableEvent {
  /** YAML tool name and the toolable tool that emitted the event. */
  tool: string;
  callable: string;
  /** The run the call belongs to ("host" outside runs). */
  runId: string;
  event: ToolableEventBody;
}

export interface SampleRequest {
  tool: string;
  callable: string;
  runId: string;
  prompt: string;
  max_tokens: number;
  system?: string;
  temperature?: number;
  stop_sequences?: string[];
  /** Aborted when the call ends (timeout, run cancelled). */
  signal: AbortSignal;
}

/** Answers a sampling request with the completion text. */
export type Sampler = (request: SampleRequest) => Promise<string>;

/** The longest completion handed back to a tool, whoever answers it (MCP client, agent model, --sampler). */
export const MAX_SAMPLE_CHARS = 200_000;

/** A completion cut to MAX_SAMPLE_CHARS. */
export function boundedSample(text: string): string {
  return text.length > MAX_SAMPLE_CHARS ? text.slice(0, MAX_SAMPLE_CHARS) : text;
}

export interface ToolableHostOptions {
  /** Without one, a tool's sampling request is refused (its stdin is closed), never left waiting. */
  sampler?: Sampler;
  /** Every event of every toolable call, as it happens. Must not throw (errors are ignored). */
  onEvent?: (event: ToolableEvent) => void;
  /** `stdin` (default) or `http`: answer sampling through a one-call listener on 127.0.0.1. */
  sampleVia?: "stdin" | "http";
}

/** One line for a human (the CLI's stderr): `[tools.py.count] progress 50%: counted 1`. Control characters are shown escaped. */
export function eventLine(e: ToolableEvent): string {
  const ev = e.event;
  const text =
    ev.type === "progress" ? `progress${ev.percent !== undefined ? ` ${ev.percent}%` : ""}: ${ev.message}` : ev.type === "log" ? `${ev.level}: ${ev.message}` : `artifact ${ev.name}: ${ev.uri}`;
  // eslint-disable-next-line no-control-regex
  return `[tools.${e.tool}.${e.callable}] ${text}`.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
