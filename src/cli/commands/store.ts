/**
 * `ts-code-mode store bootstrap|list|pull|diff`: move workflows and tool YAML between a folder and
 * Redis, so a container (or any number of them) can run from Redis alone.
 *
 * The Redis URL comes from --target or TS_CODE_MODE_REDIS_URL (which keeps a password out of `ps`);
 * it is checked before anything else and never printed: messages name host:port only. The client
 * gives up connecting after 2 s and does not retry, so a wrong URL fails fast.
 */
import { Option, type Command } from "commander";
import { RedisStorage } from "../../storage/redis/storage.js";
import { oneLine, table } from "../format.js";
import { addJsonOption, CliUsageError, examples, printJson, storageFlagError, userPath, writeLine } from "../shared.js";
import {
  bootstrap,
  diff,
  listTarget,
  pull,
  resolveSourceDir,
  SourceError,
  STORE_TYPES,
  type ListedTool,
  type ListedWorkflow,
  type Progress,
  type StoreType,
} from "./store-ops.js";
import type { ListedSkill } from "./store-skills.js";

const URL_ENV = "TS_CODE_MODE_REDIS_URL";
const CONNECT_TIMEOUT_MS = 2_000;

interface StoreFlags {
  target?: string;
  prefix: string;
  type: StoreType;
  workspace?: string;
  json?: boolean;
}

interface SourceFlags extends StoreFlags {
  source: string;
}

export function registerStoreCommands(program: Command): void {
  const store = program
    .command("store")
    .description("Copy workflows and tool YAML between a folder and Redis, list, pull and compare them")
    .addHelpText(
      "after",
      examples(
        "store bootstrap --source ./.code-mode --target redis://localhost:6379 --prefix myapp",
        "store bootstrap --source ./.code-mode --target redis://localhost:6379 --prefix myapp --type tools --clear",
        "store diff --source ./.code-mode --target redis://localhost:6379 --prefix myapp",
      ) + `\nThe URL may also come from ${URL_ENV}. Keys: <prefix>:workflows, <prefix>:tools (see docs/storage.md).\n`,
    );

  const boot = withTargetOptions(store.command("bootstrap").description("Copy workflows (or tool YAML files) from a folder into Redis"));
  boot
    .requiredOption("--source <dir>", "a base folder (uses DIR/workflows or DIR/tools) or the folder of files itself")
    .option("--clear", "first remove what the target holds of this type (atomic: readers see the old set or the new one)");
  addJsonOption(boot, "print what was written and removed as JSON");
  boot.action(async (flags: SourceFlags & { clear?: boolean }) => {
    await withStorage(flags, async (storage) => {
      const source = await sourceDir(flags);
      const report = await bootstrap(storage, flags.type, source, { clear: flags.clear === true, progress: progressLine("bootstrap") });
      for (const w of report.warnings) writeLine(process.stderr, `warning: ${w}`);
      if (flags.json) return printJson({ ...report, target: storage.where, prefix: storage.prefix, workspaceId: storage.workspaceId ?? null });
      const removed = report.removed.length ? `, removed ${report.removed.length} (${report.removed.join(", ")})` : "";
      writeLine(process.stdout, `Wrote ${report.written.length} ${flags.type} from ${report.source} to ${describeTarget(storage, flags.type)}${removed}.`);
    });
  });

  const list = withTargetOptions(store.command("list").description("List the workflows (or tool YAML files) held in Redis"));
  addJsonOption(list, "print the entries as JSON");
  list.action(async (flags: StoreFlags) => {
    await withStorage(flags, async (storage) => {
      const entries = await listTarget(storage, flags.type);
      if (flags.json) return printJson(entries);
      if (entries.length === 0) return writeLine(process.stdout, `No ${flags.type} in ${describeTarget(storage, flags.type)}.`);
      if (flags.type === "skills") return writeLine(process.stdout, skillTable(entries as ListedSkill[]));
      writeLine(process.stdout, flags.type === "workflows" ? workflowTable(entries as ListedWorkflow[]) : toolTable(entries as ListedTool[]));
    });
  });

  const pullCmd = withTargetOptions(store.command("pull").description("Write the workflows (or tool YAML files) held in Redis into DIR/workflows (or DIR/tools)"));
  pullCmd.requiredOption("--dest <dir>", "base folder to write into (created if missing)");
  addJsonOption(pullCmd, "print every file written as JSON");
  pullCmd.action(async (flags: StoreFlags & { dest: string }) => {
    await withStorage(flags, async (storage) => {
      const report = await pull(storage, flags.type, userPath(flags.dest, "--dest"), progressLine("pull"));
      if (flags.json) return printJson(report);
      const count = (o: string) => report.written.filter((w) => w.outcome === o).length;
      writeLine(
        process.stdout,
        `Pulled ${report.written.length} ${flags.type} into ${report.dest}: ${count("created")} created, ${count("replaced")} replaced, ${count("unchanged")} unchanged.`,
      );
    });
  });

  const diffCmd = withTargetOptions(store.command("diff").description("Compare a folder with Redis: + only in source, - only in target, ~ different, = same"));
  diffCmd.requiredOption("--source <dir>", "a base folder (uses DIR/workflows or DIR/tools) or the folder of files itself");
  addJsonOption(diffCmd, "print [{ status, name }] as JSON");
  diffCmd.action(async (flags: SourceFlags) => {
    await withStorage(flags, async (storage) => {
      const entries = await diff(storage, flags.type, await sourceDir(flags));
      if (flags.json) return printJson(entries);
      if (entries.length === 0) return writeLine(process.stdout, `No ${flags.type} on either side.`);
      writeLine(process.stdout, entries.map((e) => `${e.status} ${e.name}`).join("\n"));
    });
  });
}

/** The options every subcommand shares. */
function withTargetOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option("--target <url>", "the Redis server, redis://[user:password@]host[:port][/db]").env(URL_ENV))
    .requiredOption("--prefix <prefix>", "key prefix in Redis (e.g. myapp)")
    .addOption(new Option("--type <type>", "which kind of entries: workflows, tool YAML files or skill folders").choices([...STORE_TYPES]).default("workflows"))
    .option("--workspace <id>", "the workspace whose workflows to use (tools are shared by all workspaces)");
}

/** Checks the flags, opens the storage, connects (fast failure), runs `fn`, and always closes. */
async function withStorage(flags: StoreFlags, fn: (storage: RedisStorage) => Promise<void>): Promise<void> {
  if (flags.target === undefined) throw new CliUsageError(`give the Redis server with --target redis://host:6379 (or set ${URL_ENV})`);
  if (flags.workspace !== undefined && flags.type === "tools") {
    throw new CliUsageError("tools are shared by every workspace of a prefix; drop --workspace when using --type tools");
  }
  let storage: RedisStorage;
  try {
    storage = new RedisStorage({
      url: flags.target,
      prefix: flags.prefix,
      ...(flags.workspace !== undefined ? { workspaceId: flags.workspace } : {}),
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
    });
  } catch (err) {
    throw storageFlagError(err);
  }
  try {
    await storage.connect();
    await fn(storage);
  } finally {
    await storage.close();
  }
}

async function sourceDir(flags: SourceFlags): Promise<string> {
  try {
    return await resolveSourceDir(userPath(flags.source, "--source"), flags.type);
  } catch (err) {
    if (err instanceof SourceError) throw new CliUsageError(err.message);
    throw err;
  }
}

/** `store bootstrap: 300/1000 workflows read` on stderr, so stdout stays clean for --json. */
function progressLine(command: string): Progress {
  return (done, total, what) => {
    if (total >= 100) writeLine(process.stderr, `store ${command}: ${done}/${total} ${what}`);
  };
}

function describeTarget(storage: RedisStorage, type: StoreType): string {
  const key = type === "tools" ? storage.keys.tools : type === "skills" ? `${storage.keys.base}:skills:*` : storage.keys.workflows;
  return `${key} at ${storage.where}`;
}

function workflowTable(rows: ListedWorkflow[]): string {
  return table(
    ["WORKFLOW", "PARAMS", "UPDATED", "DESCRIPTION"],
    rows.map((w) => [w.name, String(w.params), w.updatedAt, oneLine(w.description)]),
  );
}

function skillTable(rows: ListedSkill[]): string {
  return table(
    ["SKILL", "FILES", "BYTES", "DESCRIPTION"],
    rows.map((s) => [s.name, String(s.files), String(s.bytes), oneLine(s.description)]),
  );
}

function toolTable(rows: ListedTool[]): string {
  return table(
    ["TOOL", "FILE", "BYTES", "DESCRIPTION"],
    rows.map((t) => [t.name, t.file, String(t.bytes), oneLine(t.description)]),
  );
}
