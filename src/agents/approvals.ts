/**
 * Approval of tool calls: the policy (approve_all, reject_all, prompt), the per-session cache
 * ("approve for the session" remembers tool name + canonical JSON of the arguments), and the
 * message a model reads when a call was rejected. Who answers a prompt is pluggable: the TTY
 * prompt of the CLI or an embedding host's `onApproval`.
 */
import { cutMiddle } from "../mcp/truncate.js";
import type { ApprovalMode } from "./files.js";

export interface ApprovalRequest {
  agent: string;
  depth: number;
  tool: string;
  args: unknown;
}

export type ApprovalDecision =
  | { kind: "approve" }
  /** Approve this call and every later call with the same tool and arguments in this runtime. */
  | { kind: "approve_session" }
  /** Run the call with these arguments instead. */
  | { kind: "edit"; args: unknown }
  | { kind: "reject"; reason?: string };

export type ApprovalHandler = (request: ApprovalRequest) => Promise<ApprovalDecision> | ApprovalDecision;

/** A rejection's reason reaches the model; a long one is cut like MCP approvals cut theirs. */
const MAX_REASON_CHARS = 2_000;

export type Outcome = { approved: true; args: unknown; how: "policy" | "once" | "session" | "cached" | "edited" } | { approved: false; reason: string };

export class Approvals {
  private readonly session = new Set<string>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly mode: ApprovalMode,
    private readonly handler: ApprovalHandler | null,
  ) {}

  /** Mode "prompt" with nobody to ask: decide() would reject every call that is not cached. */
  get asksNobody(): boolean {
    return this.mode === "prompt" && this.handler === null;
  }

  async decide(request: ApprovalRequest): Promise<Outcome> {
    if (this.mode === "approve_all") return { approved: true, args: request.args, how: "policy" };
    if (this.mode === "reject_all") {
      return { approved: false, reason: "approval mode is reject_all (headless run): no tool call that needs approval may run" };
    }
    const key = cacheKey(request.tool, request.args);
    if (this.session.has(key)) return { approved: true, args: request.args, how: "cached" };
    if (!this.handler) {
      return { approved: false, reason: "no one can approve it: there is no terminal to ask and no onApproval handler (use --approve-all to allow it)" };
    }
    // One question at a time: parallel tool calls must not interleave their prompts.
    const answer = this.queue.then(() => this.handler!(request));
    this.queue = answer.catch(() => undefined);
    const decision = await answer;
    switch (decision.kind) {
      case "approve":
        return { approved: true, args: request.args, how: "once" };
      case "approve_session":
        this.session.add(key);
        return { approved: true, args: request.args, how: "session" };
      case "edit":
        return { approved: true, args: decision.args, how: "edited" };
      case "reject": {
        const reason = decision.reason?.trim() ? cutMiddle(decision.reason.trim(), MAX_REASON_CHARS) : "no reason given";
        return { approved: false, reason: `the user rejected it: ${reason}` };
      }
    }
  }
}

/** What the model reads instead of the tool's result. */
export function rejectionText(tool: string, reason: string): string {
  return `Tool call ${tool} was not run: ${reason}. Do not retry the same call; continue without it or explain what you need.`;
}

/** Tool name + JSON of the arguments with object keys sorted, so key order does not defeat the cache. */
export function cacheKey(tool: string, args: unknown): string {
  return `${tool}\u0000${JSON.stringify(sortKeys(args))}`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}
