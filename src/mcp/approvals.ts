/**
 * Human approval of tool calls through the MCP client. The `approval` tool middleware asks an
 * `Approver`; this one asks the person at the client with MCP elicitation (`elicitation/create`: a
 * small form, approve or reject with a reason), sent as part of the run_code request that made the
 * call so it reaches the client over that request's stream. A client that cannot elicit gets the
 * documented fallback: the call is refused and the reason tells the agent why. While the human
 * decides, the run's deadline is held (see the approval middleware), and the question is withdrawn
 * when the run stops (timeout, cancel).
 *
 * The same binding (the session's server plus the run_code request being served) carries the
 * `type: toolable` tools' needs (`toolable`, given to the session's executor): their sampling
 * requests go to the client's model (`sampling/createMessage`) when the client declares sampling,
 * and their progress/log/artifact events go out as logging notifications (logger "toolable") of the
 * run_code request, when the client sent a progress token (asked to hear about the call).
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ApprovalDecision, Approver } from "../tools/middleware/builtins.js";
import { callName } from "../tools/middleware/types.js";
import { cutMiddle } from "./truncate.js";
import { boundedSample, eventLine, type ToolableHostOptions } from "../tools/adapters/toolable/host.js";
import type { ToolExtra } from "./progress.js";

/** Longest rejection reason from the user passed on to the agent. */
export const MAX_REASON_CHARS = 2_000;

/** How long a question may stay unanswered before the call is refused. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 600_000;
/** The arguments shown in the question are cut to this many characters (they come from the agent's code). */
const MAX_ARGS_CHARS = 2_000;

export const NO_SAMPLING_REASON = "the MCP client does not support sampling (it declared no sampling capability), so the tool's request for a completion was refused";
export { MAX_SAMPLE_CHARS } from "../tools/adapters/toolable/host.js";

export const NO_ELICITATION_REASON =
  "the MCP client cannot ask its user (it does not support elicitation), so calls that need approval are refused; " +
  "ask the user to make this call themselves, or to connect with a client that supports elicitation";

const FORM = {
  type: "object" as const,
  properties: {
    approve: { type: "boolean" as const, title: "Approve", description: "Let the call run" },
    reason: { type: "string" as const, title: "Reason", description: "Why not (the agent reads it when you reject)" },
  },
  required: ["approve"],
};

export interface ClientApprovalsOptions {
  /** Refuse a call whose question has had no answer for this long. Default 10 minutes. */
  timeoutMs?: number;
}

/**
 * One per MCP session: give `approver` to the `approval` middleware of that session's executor and
 * this object to `createCodeModeServer({ approvals })`, which binds it to the session's server.
 */
export class ClientApprovals {
  private server: McpServer | null = null;
  /** The run_code request being served: questions are sent as part of it. */
  private current: ToolExtra | null = null;
  private readonly timeoutMs: number;

  constructor(options: ClientApprovalsOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
  }

  /** @internal createCodeModeServer binds it (stripped from the published declarations, as they do not name MCP SDK types) */
  bind(server: McpServer): void {
    this.server = server;
  }

  /** Runs `fn` with `extra` as the request questions belong to. @internal (the server's, like `bind`) */
  async during<T>(extra: ToolExtra, fn: () => Promise<T>): Promise<T> {
    this.current = extra;
    try {
      return await fn();
    } finally {
      if (this.current === extra) this.current = null;
    }
  }

  /** Give to the session's executor (`toolable` option): sampling through the client, events as notifications. */
  readonly toolable: ToolableHostOptions = {
    sampler: async (req) => {
      const server = this.server?.server;
      if (!server?.getClientCapabilities()?.sampling) throw new Error(NO_SAMPLING_REASON);
      const result = await server.createMessage(
        {
          messages: [{ role: "user", content: { type: "text", text: req.prompt } }],
          maxTokens: req.max_tokens,
          ...(req.system !== undefined ? { systemPrompt: req.system } : {}),
          ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
          ...(req.stop_sequences !== undefined ? { stopSequences: req.stop_sequences } : {}),
        },
        { timeout: this.timeoutMs, signal: req.signal, ...(this.current ? { relatedRequestId: this.current.requestId } : {}) },
      );
      const parts: unknown[] = Array.isArray(result.content) ? result.content : [result.content];
      const text = parts.map((p) => (typeof p === "object" && p !== null && (p as { type?: unknown }).type === "text" ? String((p as { text?: unknown }).text ?? "") : "")).join("");
      return boundedSample(text);
    },
    onEvent: (e) => {
      const extra = this.current;
      if (extra?._meta?.progressToken === undefined) return;
      const level = e.event.type === "log" && ["debug", "info", "notice", "warning", "error"].includes(e.event.level) ? (e.event.level as "info") : "info";
      extra.sendNotification({ method: "notifications/message", params: { level, logger: "toolable", data: cutMiddle(eventLine(e), 8_192) } }).catch(() => {});
    },
  };

  readonly approver: Approver = async (call) => {
    const server = this.server?.server;
    if (!server?.getClientCapabilities()?.elicitation) return { approve: false, reason: NO_ELICITATION_REASON };
    const args = cutMiddle(JSON.stringify(call.args, null, 2) ?? "{}", MAX_ARGS_CHARS);
    const message = `The agent's code wants to call ${callName(call)}. Allow it?\n\nArguments:\n${args}`;
    try {
      const answer = await server.elicitInput(
        { mode: "form", message, requestedSchema: FORM },
        {
          timeout: this.timeoutMs,
          ...(this.current ? { relatedRequestId: this.current.requestId } : {}),
          ...(call.signal ? { signal: call.signal } : {}),
        },
      );
      return decision(answer.action, answer.content);
    } catch (err) {
      return { approve: false, reason: `no answer from the user (${err instanceof Error ? err.message : String(err)})` };
    }
  };
}

function decision(action: string, content: Record<string, unknown> | undefined): ApprovalDecision {
  if (action === "accept" && content?.["approve"] === true) return true;
  if (action === "accept") {
    const given = typeof content?.["reason"] === "string" ? content["reason"].trim() : "";
    // The client's text goes into the agent's error: cut it like any value from the network.
    const reason = given === "" ? "rejected by the user" : cutMiddle(given, MAX_REASON_CHARS);
    return { approve: false, reason };
  }
  return { approve: false, reason: action === "decline" ? "the user declined" : "the user dismissed the question without deciding" };
}
