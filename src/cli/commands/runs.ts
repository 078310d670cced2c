/**
 * `ts-code-mode runs list|show|prune`: the run ledger of durable sessions (docs/durable-runs.md), in
 * a base folder or on Redis (`--redis URL --prefix P [--workspace ID]`).
 */
import { Option, type Command } from "commander";
import { FileStorage } from "../../storage/file/storage.js";
import { RedisStorage } from "../../storage/redis/storage.js";
import type { StorageBackend } from "../../storage/protocol.js";
import type { RunStore } from "../../storage/runs.js";
import { pruneRuns, runDetail, runSummary } from "../../runs/retention.js";
import { table } from "../format.js";
import { addJsonOption, addStorageOptions, CliUsageError, examples, printJson, resolvePaths, writeLine, type StorageFlags } from "../shared.js";

interface RunsFlags extends StorageFlags {
  json?: boolean;
  redis?: string;
  prefix?: string;
  workspace?: string;
  limit?: number;
  olderThan?: number;
  keep?: number;
  dryRun?: boolean;
}

const DURATION = /^(\d+)(ms|s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function parseDuration(value: string): number {
  const m = DURATION.exec(value.trim());
  if (!m) throw new CliUsageError(`--older-than takes a duration like 30m, 12h or 7d; got ${JSON.stringify(value)}`);
  return Number(m[1]) * UNIT_MS[m[2]!]!;
}

function parseCount(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new CliUsageError(`expected a whole number of 0 or more; got ${JSON.stringify(value)}`);
  return n;
}

function withLedgerOptions(cmd: Command): Command {
  return addStorageOptions(cmd)
    .addOption(new Option("--redis <url>", "the ledger of a RedisStorage at this server instead of a base folder").env("TS_CODE_MODE_REDIS_URL"))
    .option("--prefix <prefix>", "with --redis: the key prefix", "ts-code-mode")
    .option("--workspace <id>", "the workspace whose runs to use");
}

async function withLedger<T>(flags: RunsFlags, fn: (runs: RunStore) => Promise<T>): Promise<T> {
  let storage: StorageBackend;
  if (flags.redis !== undefined) {
    storage = new RedisStorage({ url: flags.redis, prefix: flags.prefix ?? "ts-code-mode", ...(flags.workspace !== undefined ? { workspaceId: flags.workspace } : {}) });
  } else {
    const { storagePath } = resolvePaths(flags);
    storage = new FileStorage({ basePath: storagePath, ...(flags.workspace !== undefined ? { workspaceId: flags.workspace } : {}) });
  }
  try {
    if (!storage.runs) throw new CliUsageError("this storage keeps no run ledger");
    return await fn(storage.runs);
  } finally {
    await storage.close();
  }
}

export function registerRunsCommands(program: Command): void {
  const runs = program
    .command("runs")
    .description("List, show and prune the ledger of durable runs (sessions created with { durable })")
    .addHelpText("after", examples("runs list", "runs list --json --limit 20", "runs show <run-id> --json", "runs prune --older-than 7d --keep 500", "runs list --redis redis://localhost:6379 --prefix myapp"));

  const list = withLedgerOptions(runs.command("list").description("Runs, newest first: id, status, calls, when, the code's first line"));
  list.addOption(new Option("--limit <n>", "at most this many").argParser(parseCount));
  addJsonOption(list, "print [{ id, status, executor, calls, bytes, resumes, createdAt, updatedAt, codePreview, expiresAt?, outcome? }] as JSON");
  list.action(async (flags: RunsFlags) => {
    await withLedger(flags, async (store) => {
      const headers = (await store.list(flags.limit !== undefined ? { limit: flags.limit } : {})).map(runSummary);
      if (flags.json) return printJson(headers);
      if (!headers.length) return writeLine(process.stdout, "No runs recorded. Durable sessions (new Session({ durable })) record their runs here.");
      writeLine(process.stdout, table(["run", "status", "calls", "updated", "code"], headers.map((h) => [h.id, h.status, String(h.calls), h.updatedAt, h.codePreview])));
    });
  });

  const show = withLedgerOptions(runs.command("show").description("One run: its header and every logged call with its state").argument("<run-id>", "as runs list shows it"));
  addJsonOption(show, "print { run, calls: [{ seq, ns, op, state, startedAt, endedAt?, error?, reason?, decision?, revert? }], pending: [{ id, tool, callable, args, reason }] } as JSON");
  show.action(async (id: string, flags: RunsFlags) => {
    await withLedger(flags, async (store) => {
      const header = await store.getHeader(id);
      if (!header) throw new CliUsageError(`no run ${id} in this ledger (see: ts-code-mode runs list)`);
      const detail = runDetail(header, await store.entries(id));
      if (flags.json) return printJson(detail);
      const { calls } = detail;
      writeLine(process.stdout, `run ${header.id}: ${header.status}, ${calls.length} calls, updated ${header.updatedAt}`);
      writeLine(process.stdout, table(["seq", "call", "state", "note"], calls.map((c) => [String(c.seq), `${c.ns}.${c.op}`, c.state, c.error ? `${c.error.name}: ${c.error.message}` : (c.reason ?? "")])));
    });
  });

  const prune = withLedgerOptions(runs.command("prune").description("Remove runs older than a duration and/or beyond a count (newest kept)"));
  prune.addOption(new Option("--older-than <duration>", "remove runs not changed for this long: 30m, 12h, 7d").argParser(parseDuration));
  prune.addOption(new Option("--keep <n>", "keep at most this many runs, the newest").argParser(parseCount));
  prune.option("--dry-run", "say what would be removed, remove nothing");
  addJsonOption(prune, "print { removed: [ids], dryRun } as JSON");
  prune.action(async (flags: RunsFlags) => {
    if (flags.olderThan === undefined && flags.keep === undefined) throw new CliUsageError("say what to prune: --older-than 7d and/or --keep N");
    await withLedger(flags, async (store) => {
      const removed = await pruneRuns(store, { ...(flags.olderThan !== undefined ? { olderThanMs: flags.olderThan } : {}), ...(flags.keep !== undefined ? { keep: flags.keep } : {}), dryRun: flags.dryRun === true });
      if (flags.json) return printJson({ removed, dryRun: flags.dryRun === true });
      writeLine(process.stdout, `${flags.dryRun ? "would remove" : "removed"} ${removed.length} run${removed.length === 1 ? "" : "s"}${removed.length ? `: ${removed.join(", ")}` : ""}`);
    });
  });
}
