/**
 * The CLI's approval prompt on a terminal: shows the agent, the tool and its arguments, then asks
 * to approve once (y), for the session (s), edit the arguments (e: a JSON line) or reject (n, then
 * a reason). Anything else asks again, so a stray key never approves.
 */
import { createInterface, type Interface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { cutMiddle } from "../mcp/truncate.js";
import type { ApprovalDecision, ApprovalHandler, ApprovalRequest } from "./approvals.js";

/** Arguments longer than this are shown cut in the middle; the call still gets them whole. */
const SHOWN_ARGS_CHARS = 4_000;

export interface TtyPrompt {
  handler: ApprovalHandler;
  /** One line from the terminal (null when it closed); chat prompts share the reader with approvals. */
  ask(question: string): Promise<string | null>;
  close(): void;
}

export function ttyPrompt(input: Readable, output: Writable): TtyPrompt {
  let rl: Interface | null = null;
  const ask = (question: string) =>
    new Promise<string | null>((resolve) => {
      rl ??= createInterface({ input, output, terminal: false });
      const onClose = () => resolve(null);
      rl.once("close", onClose);
      rl.question(question, (answer) => {
        rl?.off("close", onClose);
        resolve(answer);
      });
    });

  const handler = async (request: ApprovalRequest): Promise<ApprovalDecision> => {
    const shown = cutMiddle(JSON.stringify(request.args, null, 2) ?? "undefined", SHOWN_ARGS_CHARS);
    output.write(`\n? ${request.agent} (depth ${request.depth}) wants to call ${request.tool} with:\n${shown}\n`);
    for (;;) {
      const answer = await ask("  [y] approve once  [s] approve for this session  [e] edit arguments  [n] reject > ");
      if (answer === null) return { kind: "reject", reason: "the terminal closed before an answer" };
      const choice = answer.trim().toLowerCase();
      if (choice === "y" || choice === "yes") return { kind: "approve" };
      if (choice === "s") return { kind: "approve_session" };
      if (choice === "n" || choice === "no") {
        const reason = await ask("  reason (told to the model; empty for none) > ");
        return { kind: "reject", ...(reason?.trim() ? { reason: reason.trim() } : {}) };
      }
      if (choice === "e") {
        const edited = await ask("  new arguments as one line of JSON > ");
        if (edited === null) return { kind: "reject", reason: "the terminal closed before an answer" };
        try {
          return { kind: "edit", args: JSON.parse(edited) as unknown };
        } catch (err) {
          output.write(`  not JSON (${err instanceof Error ? err.message : String(err)}); asking again\n`);
          continue;
        }
      }
      output.write("  answer y, s, e or n\n");
    }
  };
  return { handler, ask, close: () => rl?.close() };
}
