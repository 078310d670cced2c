/** `ts-code-mode workflows list|search|index|show|approve|delete`: the stored workflows of a base folder. */
import type { Command } from "commander";
import type { EmbedderSpec } from "../../search/config.js";
import { closestNames, didYouMean, NotFoundError } from "../../errors.js";
import type { WorkflowDetails, WorkflowSummary } from "../../workflows/library.js";
import { describeProvenance } from "../../workflows/provenance.js";
import { formatParam, formatParams, formatScore, oneLine, table } from "../format.js";
import {
  addJsonOption,
  addStorageOptions,
  DEFAULT_BASE,
  EXIT_FAILURE,
  examples,
  parseLimit,
  printJson,
  resolvePaths,
  searchOption,
  CLI_SEARCH_WAIT_MS,
  withSession,
  writeLine,
  type StorageFlags,
} from "../shared.js";

interface JsonFlags extends StorageFlags {
  json?: boolean;
}

interface SearchFlags extends JsonFlags {
  limit?: number;
}

/** How many names an unknown-workflow message lists when none is close. */
const MAX_LISTED = 20;

export function registerWorkflowsCommands(program: Command): void {
  const workflows = program
    .command("workflows")
    .description("List, search, index, show, approve and delete the saved workflows of a base folder")
    .addHelpText("after", examples("workflows list", "workflows search 'count lines'", "workflows show triple", "workflows approve triple", "workflows delete triple"));

  const list = workflows.command("list").description("List every workflow with its parameters");
  addStorageOptions(list);
  addJsonOption(list, "print the workflows (name, description, params, and problem for a file that cannot be invoked) as JSON");
  list.addHelpText("after", examples("workflows list", "workflows list --base ./demo --json"));
  list.action(async (flags: JsonFlags) => {
    const [all, fileProblems] = await withSession(flags, async (s) => [await s.listWorkflows(), (await s.storage.workflows.problems?.()) ?? []] as const);
    // Files that cannot be invoked are listed (with `problem`) and also named on stderr, so a
    // script reading stdout and a person reading the terminal both see them. Files the store
    // cannot offer at all (e.g. a name that is not a workflow name) exist only on stderr.
    for (const p of fileProblems) writeLine(process.stderr, `warning: workflow file ${p.file} is not offered: ${p.problem}`);
    for (const w of all) if (w.problem !== undefined) writeLine(process.stderr, `warning: workflow ${w.name} cannot be invoked: ${w.problem}`);
    if (flags.json) return printJson(all);
    if (all.length === 0) return writeLine(process.stdout, noWorkflows(flags));
    writeLine(process.stdout, workflowTable(all));
  });

  const search = workflows.command("search").description("Find workflows by what they do, best match first").argument("<query>", "words describing the task");
  addStorageOptions(search);
  search.option("--limit <n>", "at most this many results (default 10)", parseLimit);
  search.addOption(searchOption());
  addJsonOption(search, "print the matches (with scores) as JSON");
  search.addHelpText("after", examples("workflows search 'system report'", "workflows search lines --limit 3 --json"));
  search.action(async (query: string, flags: SearchFlags) => {
    const found = await withSession(flags, (s) => s.searchWorkflows(query, flags.limit !== undefined ? { limit: flags.limit } : {}), { readOnly: true, searchWaitMs: CLI_SEARCH_WAIT_MS });
    if (flags.json) return printJson(found);
    if (found.length === 0) return writeLine(process.stdout, `No workflows match ${JSON.stringify(query)}.`);
    writeLine(process.stdout, workflowTable(found, (w) => formatScore(w.score)));
    if (found.some((w) => w.indexing)) {
      writeLine(process.stderr, "note: the search index is still being built, so some workflows were ranked by their words only; build it with: ts-code-mode workflows index");
    }
  });

  const index = workflows
    .command("index")
    .description("Embed every workflow not yet in the search index now (in batches, with progress on stderr), so the next session's first search ranks by meaning at once");
  addStorageOptions(index);
  index.addOption(searchOption());
  addJsonOption(index, "print { indexed, total } as JSON (null when search is lexical)");
  index.addHelpText("after", examples("workflows index", "workflows index --base ./demo --json"));
  index.action(async (flags: JsonFlags & { search?: EmbedderSpec }) => {
    let shown = -1;
    const result = await withSession(flags, (s) =>
      s.indexWorkflows((done, total) => {
        if (done === shown) return;
        shown = done;
        writeLine(process.stderr, `workflows index: ${done}/${total} workflows embedded`);
      }),
    );
    if (flags.json) return printJson(result);
    if (result === null) return writeLine(process.stdout, "Search is lexical (search: lexical): there is no index to build.");
    writeLine(process.stdout, `${result.indexed} of ${result.total} workflows are in the search index.`);
  });

  const show = workflows.command("show").description("Show a workflow: description, parameters and source").argument("<name>", "workflow name");
  addStorageOptions(show);
  addJsonOption(show, "print the whole workflow (with source and timestamps) as JSON");
  show.addHelpText("after", examples("workflows show triple", "workflows show count_lines --json"));
  show.action(async (name: string, flags: JsonFlags) => {
    const details = await withSession(flags, async (s) => {
      const found = await s.getWorkflow(name);
      if (found) return found;
      throw unknownWorkflow(name, (await s.listWorkflows()).map((w) => w.name), flags);
    });
    if (flags.json) return printJson(details);
    writeLine(process.stdout, formatDetails(details));
  });

  const approve = workflows
    .command("approve")
    .description("Mark a workflow saved by a sandbox session as trusted, so trusted sessions run it (review it with show first)")
    .argument("<name>", "workflow name");
  addStorageOptions(approve);
  addJsonOption(approve, "print the approved workflow as JSON");
  approve.addHelpText("after", examples("workflows show report && workflows approve report"));
  approve.action(async (name: string, flags: JsonFlags) => {
    const details = await withSession(flags, async (s) => {
      if (!(await s.getWorkflow(name))) throw unknownWorkflow(name, (await s.listWorkflows()).map((w) => w.name), flags);
      return s.approveWorkflow(name);
    });
    if (flags.json) return printJson(details);
    writeLine(process.stdout, `Workflow ${details.name} is ${describeProvenance(details.provenance)}; trusted sessions now run it.`);
  });

  const del = workflows
    .command("delete")
    .alias("remove")
    .description("Delete a saved workflow (exit 1 when there is none by that name)")
    .argument("<name>", "workflow name");
  addStorageOptions(del);
  addJsonOption(del, "print { deleted } as JSON");
  del.addHelpText("after", examples("workflows delete triple"));
  del.action(async (name: string, flags: JsonFlags) => {
    const outcome = await withSession(flags, async (s) => {
      if (await s.removeWorkflow(name)) return { deleted: true as const };
      return { deleted: false as const, error: unknownWorkflow(name, (await s.listWorkflows()).map((w) => w.name), flags) };
    });
    if (flags.json) {
      if (!outcome.deleted) process.exitCode = EXIT_FAILURE;
      return printJson({ deleted: outcome.deleted });
    }
    if (!outcome.deleted) throw outcome.error;
    writeLine(process.stdout, `Deleted workflow ${name}.`);
  });
}

function workflowTable<T extends WorkflowSummary>(rows: T[], score?: (w: T) => string): string {
  const headers = [...(score ? ["SCORE"] : []), "WORKFLOW", "PARAMS", "DESCRIPTION", "TRUST"];
  return table(
    headers,
    rows.map((w) => [...(score ? [score(w)] : []), w.name, formatParams(w.params), w.problem !== undefined ? `BROKEN: ${oneLine(w.problem)}` : oneLine(w.description), w.provenance?.trust ?? "trusted"]),
  );
}

function formatDetails(w: WorkflowDetails): string {
  const lines = [w.name, w.description ? `  ${w.description.replace(/\n/g, "\n  ")}` : "  (no description)", ""];
  if (w.problem !== undefined) lines.push(`BROKEN: ${w.problem}`, "");
  lines.push("Parameters:");
  if (w.params.length === 0) lines.push("  (none)");
  for (const p of w.params) lines.push(`  ${formatParam(p)}${p.description ? `  — ${oneLine(p.description)}` : ""}`);
  const required = w.params.filter((p) => p.required).map((p) => `${p.name}: <${p.type}>`);
  lines.push("", `Call: await workflows.${w.name}({ ${required.length ? `${required.join(", ")} ` : ""}})`);
  lines.push(`Updated: ${w.updatedAt}${w.author ? `  Author: ${w.author}` : ""}`, `Provenance: ${describeProvenance(w.provenance)}`, "", "Source:", w.source);
  return lines.join("\n");
}

function unknownWorkflow(name: string, names: string[], flags: StorageFlags): NotFoundError {
  if (names.length === 0) return new NotFoundError(`Unknown workflow: ${name}. ${noWorkflows(flags)}`);
  const close = closestNames(name, names);
  if (close.length) return new NotFoundError(`Unknown workflow: ${name}.${didYouMean(name, names)}`, close);
  const shown = names.slice(0, MAX_LISTED).join(", ");
  return new NotFoundError(`Unknown workflow: ${name}. Available: ${shown}${names.length > MAX_LISTED ? `, … (${names.length} in all)` : ""}`);
}

function noWorkflows(flags: StorageFlags): string {
  const { storagePath } = resolvePaths(flags);
  const base = flags.base === DEFAULT_BASE ? "" : ` --base ${flags.base}`;
  return `No workflows in ${storagePath}. Add the examples with: ts-code-mode init${base}`;
}
