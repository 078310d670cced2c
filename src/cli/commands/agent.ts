/**
 * `ts-code-mode agent run|new|check`: agents as files (see src/agents). The answer goes to stdout;
 * the call tree, approval prompts and usage go to stderr, so `agent run ... > answer.txt` keeps
 * only the answer. Interactive approval needs a terminal on stdin; otherwise calls that need
 * approval are rejected (the model is told why) unless --approve-all is given.
 */
import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { Option, type Command } from "commander";
import { eventText, type RuntimeEvent, type UsageReport } from "../../agents/events.js";
import { AgentRuntime } from "../../agents/runtime.js";
import { pooledSessionFactory } from "../../agents/session-factory.js";
import { checkProject, loadProject } from "../../agents/files.js";
import { ttyPrompt, type TtyPrompt } from "../../agents/tty-prompt.js";
import { CliUsageError, EXIT_FAILURE, examples, printJson, writeLine } from "../shared.js";
import { addOtelOptions, startOtel, type OtelFlags } from "../otel.js";
import { checkDurableKey, parseDecisions } from "../durable.js";
import { AgentRunPausedError, loadPausedRun, removePausedRun, savePausedRun, type PausedAgentRun } from "../../agents/paused-runs.js";
import type { AgentRunResult } from "../../agents/runtime.js";

/** Refusals after which a saved paused run can never be resumed. */
const DEAD_CONTINUATION = new Set(["ContinuationExpiredError", "ContinuationUsedError"]);

/** Exit code of a run that paused for decisions (as `run --durable`). */
const EXIT_PAUSED = 3;

interface RunFlags extends OtelFlags {
  durable?: boolean;
  resume?: string;
  decisions?: string;
  inputJson?: string;
  model?: string;
  entry?: string;
  chat?: boolean;
  approveAll?: boolean;
  rejectAll?: boolean;
  verbose: number;
  json?: boolean;
}

/** Errors of a run that are the user's or the model's business, not a bug: message only, exit 1. */
const RUN_ERRORS = new Set(["PermissionDeniedError", "MaxDepthError", "AI_APICallError", "AI_LoadAPIKeyError", "AI_NoSuchModelError", "AI_RetryError"]);

export function registerAgentCommands(program: Command): void {
  const agent = program.command("agent").description("Run agents defined as files: *.agent.md plus a project.json");

  const run = agent
    .command("run")
    .description("Run the project's entry with a prompt; the answer on stdout, the call tree on stderr")
    .argument("[project]", "project folder, its project.json, or one .agent.md file (run alone with default settings)", ".")
    .argument("[prompt]", "the prompt; read from stdin when not given and stdin is not a terminal")
    .option("--input-json <json>", "give the entry this JSON value as input instead of a prompt")
    .option("--model <provider:model>", "the model of every agent, over the agent files and project.json")
    .option("--entry <name>", "run this agent (or file.ts#export listed under code) instead of project.json's entry")
    .option("--chat", "after the answer, keep reading prompts (one per line) and answer each; the entry agent keeps its history")
    .addOption(new Option("--approve-all", "approve every tool call that needs approval (automation)").conflicts("rejectAll"))
    .addOption(new Option("--reject-all", "reject every tool call that needs approval; the model is told why (headless)"))
    .option("-v, --verbose", "show tool calls and results (-vv: also model requests and token counts)", (_v: string, n: number) => n + 1, 0)
    .option("--json", "print { answer, usage, events } as JSON on stdout")
    .option("--durable", "code runs pause for calls that need approval: asked in a terminal, else the run stops (exit 3) for --resume later (TS_CODE_MODE_RUNS_SECRET, at least 32 characters)")
    .option("--resume <id>", "go on with a run that paused (the id it printed): its code resumes, earlier calls are not made again (implies --durable)")
    .option("--decisions <json>", 'with --resume: one decision per pending call, e.g. \'[{"id":"call-3","decision":"approve"}]\' ("edit" takes args, "reject" a reason); in a terminal you are asked instead');
  addOtelOptions(run);
  run.addHelpText(
    "after",
    examples(
      "agent run examples/agents 'How many words are in the notes?'",
      "echo 'Summarise the notes' | ts-code-mode agent run ./my-agent --approve-all",
      "agent run ./my-agent --input-json '{\"deck\": \"deck.pdf\"}' --json",
      "agent run ./my-agent --chat",
      "agent run ./my-agent --entry analyst --model openai:gpt-4o 'Read src/main.ts'",
      "agent run ./reviewer.agent.md 'Review the diff'",
      "agent run ./payments --durable 'Pay the open invoices' < /dev/null   # pauses at a payment: exit 3",
      "agent run ./payments --resume 6f1c... --decisions '[{\"id\":\"call-2\",\"decision\":\"approve\"}]'",
    ) +
      "\nKeys come from the environment: OPENAI_API_KEY (and OPENAI_BASE_URL), ANTHROPIC_API_KEY, or the api_key_env of a provider in project.json.\n" +
      "Approvals: in a terminal you are asked (y once, s for the session, e edit the arguments, n reject with a reason);\n" +
      "without one, calls that need approval are rejected unless --approve-all is given.\n" +
      "With --durable a call inside run_code that needs approval pauses the code run: in a terminal you are asked and it goes on;\n" +
      "without one the run stops with exit code 3 and prints how to go on with --resume (in any later process).\n",
  );
  run.action(async (target: string, prompt: string | undefined, flags: RunFlags) => {
    await startOtel(flags);
    await runCommand(target, prompt, flags);
  });

  agent
    .command("new")
    .description("Create a project folder NAME with project.json and a first agent that can run code")
    .argument("<name>", "folder to create (its last part names the agent), e.g. my-agent")
    .option("--model <provider:model>", "model of the agent", "openai:gpt-4o-mini")
    .action(async (name: string, flags: { model: string }) => newProject(name, flags.model));

  agent
    .command("check")
    .description("Validate a project: project.json, every agent file, tool and agent names, model strings, the entry; every problem of every file is listed")
    .argument("[project]", "project folder, its project.json, or one .agent.md file", ".")
    .option("--json", "print the agents found (or the problems) as JSON")
    .action(async (target: string, flags: { json?: boolean }) => {
      const { project, problems } = await checkProject(target);
      if (!project) {
        if (flags.json) printJson({ ok: false, problems: problems.map((p) => ({ file: path.relative(process.cwd(), p.file), line: p.line, problem: p.problem })) });
        else for (const p of problems) writeLine(process.stderr, `${path.relative(process.cwd(), p.file)}:${p.line}: ${p.problem}`);
        if (!flags.json) writeLine(process.stderr, `${problems.length} problem${problems.length === 1 ? "" : "s"}`);
        process.exitCode = EXIT_FAILURE;
        return;
      }
      const agents = [...project.agents.values()].map((a) => ({ name: a.name, model: a.model, tools: a.tools, file: path.relative(process.cwd(), a.file) }));
      const entry = project.entry.kind === "agent" ? project.entry.name : `${path.relative(project.dir, project.entry.file)}#${project.entry.exportName}`;
      if (flags.json) printJson({ ok: true, entry, agents });
      else writeLine(process.stdout, `ok: ${agents.length} agent${agents.length === 1 ? "" : "s"} (${agents.map((a) => a.name).join(", ")}), entry ${entry}`);
    });
}

async function runCommand(target: string, promptArg: string | undefined, flags: RunFlags): Promise<void> {
  const project = await loadProject(target, { ...(flags.model !== undefined ? { model: flags.model } : {}), ...(flags.entry !== undefined ? { entry: flags.entry } : {}) });
  const interactive = process.stdin.isTTY === true;
  const resuming = flags.resume !== undefined;
  if (flags.decisions !== undefined && !resuming) throw new CliUsageError("--decisions goes with --resume <id>");
  if (resuming && (promptArg !== undefined || flags.inputJson !== undefined || flags.chat)) throw new CliUsageError("--resume goes on with a paused run: give no prompt, --input-json or --chat");
  const decisions = flags.decisions !== undefined ? parseDecisions(flags.decisions) : undefined;
  const durable = flags.durable === true || resuming || project.config.code_mode.durable === true;
  // A remote session's server records its runs (serve --durable): no key is needed here.
  if (durable && project.config.code_mode.executor !== "remote") checkDurableKey(resuming ? "--resume" : "--durable");
  const base = path.resolve(project.dir, project.config.code_mode.base);
  let paused: PausedAgentRun | null = null;
  if (resuming) {
    paused = await loadPausedRun(base, flags.resume!);
    if (paused.code && !decisions && !interactive && !flags.approveAll && !flags.rejectAll) {
      throw new CliUsageError(`--resume ${paused.id}: ${paused.code.pending.length} call(s) wait for a decision; give --decisions (no terminal to ask): ${pendingList(paused)}`);
    }
  }
  let input: unknown;
  if (resuming) input = null;
  else if (flags.inputJson !== undefined) {
    if (promptArg !== undefined) throw new CliUsageError("give a prompt or --input-json, not both");
    try {
      input = JSON.parse(flags.inputJson) as unknown;
    } catch (err) {
      throw new CliUsageError(`--input-json is not JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
  } else if (promptArg !== undefined) input = promptArg;
  else if (!interactive && !flags.chat) input = await readStdin();
  const tty: TtyPrompt | null = interactive ? ttyPrompt(process.stdin, process.stderr) : null;
  const mode = flags.approveAll ? "approve_all" : flags.rejectAll ? "reject_all" : undefined;
  // A chat is a long-lived runner: each turn's code session starts on a spare executor (issue 24).
  const sessions = flags.chat ? pooledSessionFactory() : null;
  const runtime = new AgentRuntime(project, {
    ...(sessions ? { createSession: sessions.create } : {}),
    ...(mode ? { approvalMode: mode } : {}),
    ...(tty ? { onApproval: tty.handler } : {}),
    ...(durable ? { durable: true } : {}),
    onEvent: (e) => printEvent(e, flags.verbose),
  });
  const lines = flags.chat ? chatLines(tty) : null;
  try {
    if (input === undefined) {
      input = await lines?.next();
      if (input === null || input === undefined) throw new CliUsageError("no prompt given: pass it as an argument, pipe it in, or use --input-json");
    }
    let result: AgentRunResult;
    if (paused) {
      const state = paused;
      // Once the code went on, the saved state needs no decisions: a failed model call can be resumed again.
      result = await runtime.resume(state, decisions, { onCodeResumed: async (next) => void (await savePausedRun(base, next)) }).catch(async (err: unknown) => {
        // A continuation that expired or was used can never go on: the saved run goes with it.
        if (err instanceof Error && DEAD_CONTINUATION.has(err.name)) {
          await removePausedRun(base, state.id);
          writeLine(process.stderr, `the paused run ${state.id} cannot go on (${err.name}); it was removed`);
        }
        throw err;
      });
      await removePausedRun(base, state.id);
    } else result = await runtime.run(input);
    if (!flags.json) writeLine(process.stdout, result.answer);
    while (lines) {
      const next = await lines.next();
      if (next === null) break;
      result = await runtime.run(next);
      writeLine(process.stdout, result.answer);
    }
    printUsage(result.usage);
    if (flags.json) printJson({ answer: result.answer, usage: result.usage, events: result.events });
  } catch (err) {
    if (err instanceof AgentRunPausedError) {
      await reportPause(err.state, base, target, flags);
      if (paused && paused.id !== err.state.id) await removePausedRun(base, paused.id);
      return;
    }
    if (err instanceof Error && RUN_ERRORS.has(err.name)) {
      writeLine(process.stderr, `error: ${err.message}`);
      process.exitCode = EXIT_FAILURE;
      return;
    }
    throw err;
  } finally {
    tty?.close();
    await sessions?.close();
  }
}

/** Saves the paused run and says on stderr what waits and how to go on (stdout stays for answers); exit code 3. */
async function reportPause(state: PausedAgentRun, base: string, target: string, flags: RunFlags): Promise<void> {
  await savePausedRun(base, state);
  const ids = state.code?.pending.map((p) => ({ id: p.id, decision: "approve" })) ?? [];
  if (flags.json) printJson({ status: "paused", id: state.id, pending: state.code?.pending ?? [] });
  writeLine(process.stderr, `paused: ${pendingList(state)}`);
  const where = target === "." ? "" : ` ${target}`;
  writeLine(process.stderr, `To go on: ts-code-mode agent run${where} --resume ${state.id} --decisions '${JSON.stringify(ids)}'`);
  process.exitCode = EXIT_PAUSED;
}

/** "call-2 journal.pay {"line":"pay 100"} (payments need a human)", one per pending call. */
function pendingList(state: PausedAgentRun): string {
  return (state.code?.pending ?? [])
    .map((p) => `${p.id} ${p.callable === null ? p.tool : `${p.tool}.${p.callable}`} ${(JSON.stringify(p.args) ?? "").slice(0, SHORT)}${p.reason ? ` (${p.reason.slice(0, SHORT)})` : ""}`)
    .join("; ");
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") throw new CliUsageError("no prompt given: stdin was empty");
  return text;
}

/** Chat prompts: through the terminal's line reader (shared with approvals) or, piped, one per line of stdin. An empty line or EOF ends the chat. */
function chatLines(tty: TtyPrompt | null): { next(): Promise<string | null> } {
  if (tty) return { next: async () => (await tty.ask("\nyou> "))?.trim() || null };
  const iterator = (async function* () {
    const { createInterface } = await import("node:readline");
    yield* createInterface({ input: process.stdin, terminal: false });
  })();
  return {
    next: async () => {
      const r = await iterator.next();
      return r.done || !r.value.trim() ? null : r.value;
    },
  };
}

const SHORT = 160;

/** The call tree: agents always, tool calls with -v, model requests with -vv. */
function printEvent({ agent, depth, event }: RuntimeEvent, verbose: number): void {
  const pad = "  ".repeat(depth);
  const short = (t: string) => eventText(t.replace(/\s+/g, " ")).slice(0, SHORT);
  const line = (text: string) => process.stderr.write(`${pad}${text}\n`);
  switch (event.type) {
    case "agent_start":
      line(`▸ ${agent}${depth ? ` (depth ${depth})` : ""}`);
      break;
    case "tool_call":
      if (verbose >= 1) line(`  → ${event.tool} ${short(event.args)}`);
      break;
    case "approval":
      if (!event.approved || verbose >= 1) line(`  ${event.approved ? "✓ approved" : "✗ rejected"} ${event.tool}: ${event.how}`);
      break;
    case "tool_result":
      if (verbose >= 1) line(`  ${event.ok ? "←" : "← error:"} ${short(event.result)}`);
      break;
    case "model_request":
      if (verbose >= 2) line(`  … model request ${event.step}`);
      break;
    case "model_response":
      if (verbose >= 2) line(`  … ${event.inputTokens} in / ${event.outputTokens} out tokens${event.toolCalls.length ? `, calls ${event.toolCalls.join(", ")}` : ""}`);
      break;
    case "agent_end":
      if (verbose >= 1) line(`◂ ${agent}: ${short(event.answer)}`);
      break;
  }
}

function printUsage(usage: UsageReport): void {
  const per = Object.entries(usage.agents)
    .map(([name, u]) => `${name} ${u.requests}`)
    .join(", ");
  process.stderr.write(`usage: ${usage.total.requests} model requests (${per}), ${usage.total.inputTokens} input + ${usage.total.outputTokens} output tokens\n`);
}

async function newProject(target: string, model: string): Promise<void> {
  if (!/^[a-z][a-z0-9_-]*:\S+$/.test(model)) throw new CliUsageError(`--model: expected "provider:model", e.g. openai:gpt-4o-mini or anthropic:claude-haiku-4-5`);
  const dir = path.resolve(target);
  const name = path.basename(dir).toLowerCase().replace(/[^a-z0-9_-]/g, "-").replace(/^[^a-z]+/, "") || "main";
  const existing = await readdir(dir).catch(() => null);
  if (existing && existing.length > 0) throw new CliUsageError(`${target} exists and is not empty; pick a new folder name`);
  await mkdir(dir, { recursive: true });
  const project = { version: 1, agents: [`${name}.agent.md`], entry: name, approval_mode: "prompt", max_depth: 5 };
  await writeFile(path.join(dir, "project.json"), `${JSON.stringify(project, null, 2)}\n`, { flag: "wx" });
  const agentText = [
    "---",
    `name: ${name}`,
    `description: ${name} agent`,
    `model: ${model}`,
    "tools: [code, filesystem_project_ro]",
    "---",
    "You are a helpful agent. For anything that needs computing, searching or several steps, write",
    "TypeScript for run_code: tools, workflows, artifacts and deps are in scope there.",
    "",
  ].join("\n");
  await writeFile(path.join(dir, `${name}.agent.md`), agentText, { flag: "wx" });
  writeLine(
    process.stdout,
    `created ${path.relative(process.cwd(), dir) || "."}/project.json and ${name}.agent.md\n` +
      `next: set ${model.startsWith("anthropic:") ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY"}, then: ts-code-mode agent run ${target} 'hello'`,
  );
}
