/**
 * Tool YAML kept in Redis (`store bootstrap --type tools`) as a folder the tool registry loads like
 * any other: `mcp --redis … --prefix …` without `--tools` serves these, so a container needs nothing
 * but the Redis URL. The folder is private (mkdtemp: mode 0700), a snapshot taken at start, and
 * removed when the server stops.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { RedisStorage } from "../storage/redis/storage.js";
import { loadToolDocuments, validateToolFileStem } from "../storage/redis/tools.js";

export interface ToolsFolder {
  dir: string;
  /** How many tool files Redis held. */
  count: number;
  remove(): Promise<void>;
}

export async function redisToolsFolder(storage: RedisStorage): Promise<ToolsFolder> {
  const docs = await loadToolDocuments(storage);
  const dir = await mkdtemp(path.join(os.tmpdir(), "ts-code-mode-tools-"));
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    // The stem was checked when stored; check again, as it becomes a file name here.
    for (const doc of docs) await writeFile(path.join(dir, `${validateToolFileStem(doc.name)}.yaml`), doc.text, { mode: 0o600 });
  } catch (err) {
    await remove();
    throw err;
  }
  return { dir, count: docs.length, remove };
}
