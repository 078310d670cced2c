/**
 * The container's folders as a user writes them — `--workspace-dir DIR` and `--mount
 * SRC:DST[:ro|rw]` on the command line, `workspace_dir` and `mounts` in project.json's
 * `code_mode` — checked once, the same way for both: host paths must exist; container paths are
 * absolute, normalised, without `..` or the characters that separate fields in engine mount
 * strings; refused, never repaired.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { ValidationError } from "../../errors.js";

export interface MountSpec {
  source: string;
  target: string;
  readOnly: boolean;
}

/** How a host path given by the user becomes absolute (the CLI expands ~; project.json resolves against its folder). */
export type HostPathResolver = (value: string) => string;

function containerPathProblem(p: string): string | null {
  if (!p.startsWith("/")) return "must be an absolute path inside the container";
  if (p.split("/").includes("..")) return "must not contain '..'";
  if (/[,:\0\n]/.test(p)) return "must not contain ',', ':', NUL or a newline";
  if (path.posix.normalize(p) !== p && path.posix.normalize(p) !== p.replace(/\/+$/, "")) return "must be a normalised path (no '.', '//')";
  return null;
}

function existingHostPath(value: string, label: string, resolve: HostPathResolver): string {
  if (/[,\0\n]/.test(value)) throw new ValidationError(`${label} ${JSON.stringify(value)}: the host path must not contain ',', NUL or a newline`);
  const full = resolve(value);
  if (!existsSync(full)) throw new ValidationError(`${label} ${JSON.stringify(value)}: ${full} does not exist`);
  return full;
}

/** A workspace folder: existing, and usable as the same path inside the container. */
export function parseWorkspaceDir(value: string, label: string, resolve: HostPathResolver): string {
  const full = existingHostPath(value, label, resolve);
  const problem = containerPathProblem(full);
  if (problem) throw new ValidationError(`${label} ${full}: the path is used inside the container too, so it ${problem}`);
  return full;
}

/** `SRC:DST`, `SRC:DST:ro` or `SRC:DST:rw` (read-only unless rw). */
export function parseMountSpec(value: string, label: string, resolve: HostPathResolver): MountSpec {
  const parts = value.split(":");
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => p === "")) {
    throw new ValidationError(`${label} ${JSON.stringify(value)}: expected SRC:DST or SRC:DST:ro or SRC:DST:rw (a host path, an absolute path inside; no other ':')`);
  }
  const [src = "", dst = "", mode = "ro"] = parts;
  if (mode !== "ro" && mode !== "rw") throw new ValidationError(`${label} ${JSON.stringify(value)}: the mode must be ro or rw, got ${JSON.stringify(mode)}`);
  const problem = containerPathProblem(dst);
  if (problem) throw new ValidationError(`${label} ${JSON.stringify(value)}: DST ${problem}`);
  return { source: existingHostPath(src, label, resolve), target: dst.length > 1 ? dst.replace(/\/+$/, "") : dst, readOnly: mode === "ro" };
}
