/**
 * FileStorage's run ledger:
 *
 *   <root>/runs/<id>/run.json            the header (atomic replace)
 *   <root>/runs/<id>/calls/<time>-<n>-<pid>.json   a batch of logged calls (a later batch's entry
 *                                        replaces an earlier one of the same seq: a decision, a revert)
 *   <root>/runs/<id>/claims/<token>      created exclusively: a token is claimed once
 *   <root>/runs/.tmp/                    temp files of writes in progress
 *   <root>/runs/.by-time/<updatedAt>-<id>  an empty stamp left by each header write (updatedAt in
 *                                        epoch ms, 15 digits): pruning lists these instead of
 *                                        reading every header
 *
 * Each record has one commit point, its rename (see ../atomic.ts); there is no index file to keep
 * consistent, so several processes may share the folder. A stamp only ever says when a header was
 * written: a run's newest stamp is its last change, older ones are removed by the next prune, and a
 * run without one (written before stamps, or its stamp write failed) is read once and stamped.
 */
import { mkdir, open, readdir, rm, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { ValidationError } from "../../errors.js";
import { guardFs, isErrno, readFileIfExists, writeFileAtomic } from "../atomic.js";
import { checkLedgerEntry, parseRunHeader, validateClaimToken, validateRunId, type LedgerEntry, type RunHeader, type RunListOptions, type RunPruneBounds, type RunStore } from "../runs.js";

export const RUNS_TEMP_DIR = ".tmp";
export const RUNS_STAMP_DIR = ".by-time";
const STAMP = /^(\d{15})-([A-Za-z0-9][A-Za-z0-9_-]{0,63})$/;
let batchCounter = 0;

export class FileRunStore implements RunStore {
  private readonly tempDir: string;
  private readonly stampDir: string;

  constructor(readonly dir: string) {
    this.tempDir = path.join(dir, RUNS_TEMP_DIR);
    this.stampDir = path.join(dir, RUNS_STAMP_DIR);
  }

  private runDir(id: string): string {
    return path.join(this.dir, validateRunId(id));
  }

  async putHeader(header: RunHeader): Promise<void> {
    const file = path.join(this.runDir(header.id), "run.json");
    await guardFs("write run", file, () => writeFileAtomic(file, JSON.stringify(header), { tempDir: this.tempDir }));
    await this.stamp(header.id, Date.parse(header.updatedAt));
  }

  /** Leaves the stamp of a header written with this updatedAt (after its commit: a stamp never runs ahead of a header). */
  private async stamp(id: string, updatedAtMs: number): Promise<void> {
    if (!Number.isSafeInteger(updatedAtMs) || updatedAtMs < 0) return;
    const file = path.join(this.stampDir, stampName(updatedAtMs, id));
    await guardFs("stamp run", file, async () => {
      await mkdir(this.stampDir, { recursive: true });
      await writeFile(file, "");
    });
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

  /**
   * Removes the runs past the bounds from the stamps: one listing of the runs and one of the stamps,
   * and a header read only for a run about to be removed (to confirm its stamp: a writer killed
   * between a header and its stamp leaves an older stamp) or a run without a stamp. Same result as
   * ranking every header by updatedAt, which read every header of the ledger.
   */
  async prune(bounds: RunPruneBounds): Promise<string[]> {
    const ids = new Set((await guardFs("list runs", this.dir, () => readdirIfExists(this.dir))).filter((n) => !n.startsWith(".")));
    const stampNames = await guardFs("list run stamps", this.stampDir, () => readdirIfExists(this.stampDir));
    const latest = new Map<string, number>();
    const stale: string[] = [];
    for (const name of stampNames) {
      const m = STAMP.exec(name);
      if (!m) continue;
      const ms = Number(m[1]);
      const id = m[2]!;
      const known = latest.get(id);
      if (!ids.has(id)) stale.push(name);
      else if (known === undefined || ms > known) {
        if (known !== undefined) stale.push(stampName(known, id));
        latest.set(id, ms);
      } else stale.push(name);
    }
    const read = new Map<string, RunHeader | null>();
    const header = async (id: string): Promise<RunHeader | null> => {
      if (!read.has(id)) read.set(id, await this.getHeader(id).catch(() => null));
      return read.get(id) ?? null;
    };
    const restamp = async (id: string, ms: number): Promise<void> => {
      if (bounds.dryRun) return;
      await this.stamp(id, ms);
      const old = latest.get(id);
      if (old !== undefined && old !== ms) stale.push(stampName(old, id));
    };
    for (const id of ids) {
      if (latest.has(id)) continue;
      const h = await header(id);
      const ms = h ? Date.parse(h.updatedAt) : NaN;
      if (!Number.isSafeInteger(ms) || ms < 0) continue; // not a run, or one list() would skip too
      await restamp(id, ms);
      latest.set(id, ms);
    }
    // Rank by stamp; confirm each run to remove by its header, re-ranking when a stamp was behind.
    for (;;) {
      const ranked = [...latest].sort((a, b) => b[1] - a[1]);
      const doomed = ranked.filter(([, ms], i) => (bounds.keep !== undefined && i >= bounds.keep) || (bounds.cutoffMs !== undefined && ms < bounds.cutoffMs));
      let moved = false;
      for (const [id, ms] of doomed) {
        const h = await header(id);
        const actual = h ? Date.parse(h.updatedAt) : NaN;
        if (!h) {
          latest.delete(id); // gone meanwhile, or not a run: list() would not show it
          moved = true;
        } else if (Number.isSafeInteger(actual) && actual !== ms) {
          await restamp(id, actual);
          latest.set(id, actual);
          moved = true;
        }
      }
      if (moved) continue;
      const removed = doomed.map(([id]) => id);
      if (bounds.dryRun) return removed;
      for (const id of removed) {
        await guardFs("delete run", this.runDir(id), () => rm(this.runDir(id), { recursive: true, force: true }));
        stale.push(stampName(latest.get(id)!, id));
      }
      for (const name of stale) await unlink(path.join(this.stampDir, name)).catch(() => undefined);
      return removed;
    }
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

function stampName(updatedAtMs: number, id: string): string {
  return `${String(updatedAtMs).padStart(15, "0")}-${id}`;
}

async function readdirIfExists(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if (isErrno(err, "ENOENT", "ENOTDIR")) return [];
    throw err;
  }
}
