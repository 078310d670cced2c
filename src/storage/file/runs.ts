/**
 * FileStorage's run ledger:
 *
 *   <root>/runs/<id>/run.json            the header (atomic replace)
 *   <root>/runs/<id>/calls/<time>-<n>-<pid>.json   a batch of logged calls (a later batch's entry
 *                                        replaces an earlier one of the same seq: a decision, a revert)
 *   <root>/runs/<id>/claims/<token>      created exclusively: a token is claimed once
 *   <root>/runs/.tmp/                    temp files of writes in progress
 *
 * Each record has one commit point, its rename (see ../atomic.ts); there is no index file, so
 * several processes may share the folder.
 */
import { mkdir, open, readdir, rm } from "node:fs/promises";
import path from "node:path";
import { ValidationError } from "../../errors.js";
import { guardFs, isErrno, readFileIfExists, writeFileAtomic } from "../atomic.js";
import { checkLedgerEntry, parseRunHeader, validateClaimToken, validateRunId, type LedgerEntry, type RunHeader, type RunListOptions, type RunStore } from "../runs.js";

export const RUNS_TEMP_DIR = ".tmp";
let batchCounter = 0;

export class FileRunStore implements RunStore {
  private readonly tempDir: string;

  constructor(readonly dir: string) {
    this.tempDir = path.join(dir, RUNS_TEMP_DIR);
  }

  private runDir(id: string): string {
    return path.join(this.dir, validateRunId(id));
  }

  async putHeader(header: RunHeader): Promise<void> {
    const file = path.join(this.runDir(header.id), "run.json");
    await guardFs("write run", file, () => writeFileAtomic(file, JSON.stringify(header), { tempDir: this.tempDir }));
  }

  async getHeader(id: string): Promise<RunHeader | null> {
    const file = path.join(this.runDir(id), "run.json");
    const bytes = await guardFs("read run", file, () => readFileIfExists(file));
    return bytes ? parseRunHeader(bytes.toString("utf8"), file) : null;
  }

  async putEntries(id: string, entries: readonly LedgerEntry[]): Promise<void> {
    if (entries.length === 0) return;
    // One file per batch (one rename: its commit point); a later batch's entry replaces an earlier
    // one with the same seq. Names sort by time, then by a per-process counter.
    const name = `${String(Date.now()).padStart(15, "0")}-${String(++batchCounter).padStart(9, "0")}-${process.pid}.json`;
    const file = path.join(this.runDir(id), "calls", name);
    await guardFs("write ledger entries", file, () => writeFileAtomic(file, JSON.stringify(entries), { tempDir: this.tempDir }));
  }

  async entries(id: string): Promise<LedgerEntry[]> {
    const calls = path.join(this.runDir(id), "calls");
    const names = await guardFs("list ledger", calls, () => readdirIfExists(calls));
    const bySeq = new Map<number, LedgerEntry>();
    for (const name of names.filter((n) => n.endsWith(".json")).sort()) {
      const file = path.join(calls, name);
      const bytes = await guardFs("read ledger entries", file, () => readFileIfExists(file));
      if (!bytes) continue;
      const batch: unknown = JSON.parse(bytes.toString("utf8"));
      if (!Array.isArray(batch)) throw new ValidationError(`${file} is not a batch of ledger entries`);
      for (const raw of batch) {
        const entry = checkLedgerEntry(raw, file);
        bySeq.set(entry.seq, entry);
      }
    }
    return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  }

  async list(options: RunListOptions = {}): Promise<RunHeader[]> {
    const names = await guardFs("list runs", this.dir, () => readdirIfExists(this.dir));
    const headers: RunHeader[] = [];
    for (const name of names) {
      if (name.startsWith(".")) continue;
      try {
        const h = await this.getHeader(name);
        if (h) headers.push(h);
      } catch {
        // A folder that is not a run (or a header being replaced by a killed writer's leftovers): skip it.
      }
    }
    headers.sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
    return options.limit === undefined ? headers : headers.slice(0, options.limit);
  }

  async delete(id: string): Promise<boolean> {
    const dir = this.runDir(id);
    const existed = (await readFileIfExists(path.join(dir, "run.json"))) !== null;
    await guardFs("delete run", dir, () => rm(dir, { recursive: true, force: true }));
    return existed;
  }

  async claim(id: string, token: string): Promise<boolean> {
    const claims = path.join(this.runDir(id), "claims");
    const file = path.join(claims, validateClaimToken(token));
    return guardFs("claim", file, async () => {
      await mkdir(claims, { recursive: true });
      try {
        // "wx": exclusive create, atomic on every local filesystem — one process wins.
        await (await open(file, "wx")).close();
        return true;
      } catch (err) {
        if (isErrno(err, "EEXIST")) return false;
        throw err;
      }
    });
  }
}

async function readdirIfExists(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if (isErrno(err, "ENOENT", "ENOTDIR")) return [];
    throw err;
  }
}
