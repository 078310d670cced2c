/** The runtime's events, usage counters and the bounded log kept for `--json`. */
import { cutMiddle } from "../mcp/truncate.js";

export type AgentEvent =
  | { type: "agent_start"; input: string }
  | { type: "model_request"; step: number }
  | { type: "model_response"; step: number; text: string; toolCalls: string[]; inputTokens: number; outputTokens: number }
  | { type: "tool_call"; tool: string; args: string }
  | { type: "approval"; tool: string; approved: boolean; how: string }
  | { type: "tool_result"; tool: string; ok: boolean; result: string }
  | { type: "agent_end"; answer: string };

export interface RuntimeEvent {
  agent: string;
  depth: number;
  event: AgentEvent;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  requests: number;
}

export interface UsageReport {
  total: Usage;
  agents: Record<string, Usage>;
}

/** Text in an event (arguments, results, answers) is cut to this: events are for people and logs. */
export const EVENT_TEXT_CHARS = 2_000;
/** The log keeps the latest this many events; a run of a million steps must not grow it forever. */
export const MAX_KEPT_EVENTS = 10_000;

export function eventText(value: unknown): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  return cutMiddle(text, EVENT_TEXT_CHARS);
}

export class UsageTotals {
  readonly total: Usage = zero();
  private readonly perAgent = new Map<string, Usage>();

  add(agent: string, inputTokens: number, outputTokens: number): void {
    let u = this.perAgent.get(agent);
    if (!u) this.perAgent.set(agent, (u = zero()));
    for (const target of [u, this.total]) {
      target.inputTokens += inputTokens;
      target.outputTokens += outputTokens;
      target.requests += 1;
    }
  }

  report(): UsageReport {
    return { total: { ...this.total }, agents: Object.fromEntries([...this.perAgent].map(([k, v]) => [k, { ...v }])) };
  }
}

function zero(): Usage {
  return { inputTokens: 0, outputTokens: 0, requests: 0 };
}

export class EventLog {
  private readonly kept: RuntimeEvent[] = [];
  dropped = 0;

  push(e: RuntimeEvent): void {
    this.kept.push(e);
    if (this.kept.length > MAX_KEPT_EVENTS) {
      this.kept.shift();
      this.dropped++;
    }
  }

  list(): RuntimeEvent[] {
    return [...this.kept];
  }
}
