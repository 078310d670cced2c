/**
 * Name rules for stored records. Every store checks a name here before it touches disk or network,
 * so a bad name fails with the same wording in every backend and can never escape the storage root
 * (`..`, absolute paths) or collide with the files a backend keeps for itself (anything starting
 * with `.` is reserved for sidecars and temp files).
 */
import { InvalidNameError } from "../errors.js";

/** Workflow names are identifiers because agents call them as `workflows.<name>(...)`. */
export const WORKFLOW_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * One limit for storage and the workflows layer (they differed: 250 and 100, so storage accepted
 * names the library refused). 100 leaves room for `<name>.json` sidecars within 255-byte file names.
 */
export const MAX_WORKFLOW_NAME_LENGTH = 100;
export const MAX_SEGMENT_BYTES = 255;
export const MAX_NAME_BYTES = 1024;

const ARTIFACT_RULES =
  'artifact names are "/"-separated segments of printable characters (e.g. "scans/host-1.json"); ' +
  `no segment may be empty, only whitespace, ".", "..", or start with "."; no backslashes; at most ${MAX_SEGMENT_BYTES} ` +
  `bytes per segment and ${MAX_NAME_BYTES} bytes in total`;

const WORKFLOW_RULES =
  "a workflow name is an identifier: a letter or underscore, then letters, digits or underscores " +
  `(at most ${MAX_WORKFLOW_NAME_LENGTH} characters), e.g. "scan_host"`;

// In `u` mode a surrogate range only matches *lone* surrogates, which UTF-8 cannot encode.
const LONE_SURROGATE = /[\ud800-\udfff]/u;

const utf8Length = (s: string): number => Buffer.byteLength(s, "utf8");

/**
 * Checks an artifact name and returns its segments. Throws InvalidNameError that says what was
 * wrong and what is accepted.
 */
export function validateArtifactName(name: unknown): string[] {
  const problem = artifactNameProblem(name);
  if (problem) throw new InvalidNameError(`Invalid artifact name ${show(name)}: ${problem}. Accepted: ${ARTIFACT_RULES}.`);
  return (name as string).split("/");
}

/** Why `name` is not a valid artifact name, or null when it is. */
export function artifactNameProblem(name: unknown): string | null {
  if (typeof name !== "string") return `expected a string, got ${typeOf(name)}`;
  if (name.length === 0) return "it is empty";
  if (name.startsWith("/")) return "it is an absolute path; use a path relative to the artifact store";
  if (/^[A-Za-z]:/.test(name)) return "it looks like a Windows drive path; use a relative path";
  if (name.includes("\\")) return 'it contains a backslash; separate folders with "/"';
  const common = textProblem(name);
  if (common) return common;
  if (utf8Length(name) > MAX_NAME_BYTES) return `it is ${utf8Length(name)} bytes long`;
  for (const segment of name.split("/")) {
    const p = segmentProblem(segment);
    if (p) return p;
  }
  return null;
}

/** Checks a workflow name (shape only; the workflows layer also reserves its method names). */
export function validateWorkflowName(name: unknown): string {
  if (typeof name !== "string") {
    throw new InvalidNameError(`Invalid workflow name: expected a string, got ${typeOf(name)}. Accepted: ${WORKFLOW_RULES}.`);
  }
  if (name.length === 0) throw new InvalidNameError(`Invalid workflow name: it is empty. Accepted: ${WORKFLOW_RULES}.`);
  if (name.length > MAX_WORKFLOW_NAME_LENGTH) {
    throw new InvalidNameError(
      `Invalid workflow name: it is ${name.length} characters long. Accepted: ${WORKFLOW_RULES}.`,
    );
  }
  if (!WORKFLOW_NAME_PATTERN.test(name)) {
    throw new InvalidNameError(`Invalid workflow name ${show(name)}. Accepted: ${WORKFLOW_RULES}.`);
  }
  return name;
}

/** A workspace id becomes one folder name, so it follows the rules of one artifact-name segment. */
export function validateWorkspaceId(id: unknown): string {
  let problem: string | null;
  if (typeof id !== "string") problem = `expected a string, got ${typeOf(id)}`;
  else if (id.length === 0) problem = "it is empty";
  else if (id.includes("/") || id.includes("\\")) problem = "it contains a path separator";
  // ":" separates Redis key segments: "t1:artifacts:data" would reach into workspace "t1"'s keys.
  else if (id.includes(":")) problem = 'it contains ":"';
  else problem = textProblem(id) ?? segmentProblem(id);
  if (problem) {
    throw new InvalidNameError(
      `Invalid workspaceId ${show(id)}: ${problem}. Accepted: one folder-name segment of printable characters, ` +
        `no ":", not starting with "." and at most ${MAX_SEGMENT_BYTES} bytes (e.g. "team-a").`,
    );
  }
  return id as string;
}

function textProblem(s: string): string | null {
  const control = firstControlChar(s);
  if (control === 0) return "it contains a NUL character";
  if (control !== null) return `it contains the control character U+${control.toString(16).toUpperCase().padStart(4, "0")}`;
  if (LONE_SURROGATE.test(s)) return "it contains an unpaired surrogate (not valid Unicode text)";
  return null;
}

/** C0 controls (NUL included), DEL and C1 controls: invisible, and some break terminals or paths. */
function firstControlChar(s: string): number | null {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= 0x1f || (c >= 0x7f && c <= 0x9f)) return c;
  }
  return null;
}

function segmentProblem(segment: string): string | null {
  if (segment.length === 0) return 'it has an empty segment ("//" or a leading or trailing "/")';
  // Invisible in every listing, and easy to create by accident ("" after a trim that was not done).
  if (/^\s+$/u.test(segment)) return "it is (or has a segment that is) only whitespace";
  if (segment === "." || segment === "..") return `it has a "${segment}" segment`;
  if (segment.startsWith(".")) return `segment "${segment}" starts with "." (reserved for the store's own files)`;
  if (utf8Length(segment) > MAX_SEGMENT_BYTES) return `segment "${segment.slice(0, 20)}..." is ${utf8Length(segment)} bytes long`;
  return null;
}

function typeOf(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

function show(v: unknown): string {
  if (typeof v !== "string") return `(${typeOf(v)})`;
  return JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}...` : v);
}

/** Code-unit order: the same in every backend and every locale. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
