/**
 * Package specs an agent or operator may ask for, checked before anything runs. Accepted:
 *
 *   name            lodash, @scope/pkg
 *   name@range      lodash@^4.17, dayjs@1.11.x, pkg@">=1.2 <2" (range characters only)
 *   alias@npm:...   csv@npm:csv-parse@^5
 *   a local path or tarball (./pkg, /abs/pkg.tgz) only when the operator allows local paths
 *
 * Refused with a reason: empty specs, control characters, shell metacharacters, URLs and git/file
 * specs, names over 214 characters or not valid npm names. Names are lowercased (npm names are
 * lowercase), so `Lodash@4` and `lodash@^4.17` are the same entry.
 */
import path from "node:path";
import { ValidationError } from "../errors.js";

export interface DepSpec {
  /** The key of the entry: the package (or alias) name, or the resolved path of a local spec. */
  name: string;
  /** What npm is given, normalised: `lodash@^4.17`, `csv@npm:csv-parse@^5`, `/abs/pkg.tgz`. */
  spec: string;
  local: boolean;
}

export interface SpecOptions {
  /** Accept local folders and tarballs (operator option; never for untrusted agents). */
  allowLocalPaths?: boolean;
}

export const MAX_NAME_LENGTH = 214;
const NAME_RE = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
/** Characters of semver ranges and dist-tags: 1.2.x, ^4, >=1 <2, 1 || 2, latest, beta.3 */
const RANGE_RE = /^[A-Za-z0-9.^~<>=*+|\- ]+$/;
const SHELL_META = /[;&$`'"\\(){}!#\n\r\t]/;
const URL_LIKE = /^(?:[a-z][a-z0-9+.-]*:|git@|github:|gitlab:|bitbucket:|gist:)/i;

/** Parse and normalise one spec. Throws ValidationError saying what is wrong and what is accepted. */
export function parseDepSpec(raw: unknown, options: SpecOptions = {}): DepSpec {
  const accepted = "accepted: a registry name with an optional version range, e.g. lodash, lodash@^4.17, @scope/pkg@1.2.x, or an alias csv@npm:csv-parse@^5";
  if (typeof raw !== "string") throw new ValidationError(`A package spec must be a string; got ${raw === null ? "null" : typeof raw} (${accepted})`);
  const text = raw.trim();
  if (!text) throw new ValidationError(`The package spec is empty (${accepted})`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(text)) throw new ValidationError(`The package spec ${JSON.stringify(raw)} contains control characters (${accepted})`);
  // Before the local-path check: `https://host/pkg.tgz` ends like a tarball but is a URL.
  if (URL_LIKE.test(text) && !/^file:/i.test(text)) {
    throw new ValidationError(`URLs and git specs are not allowed (${JSON.stringify(text)}): packages come from the registry by name (${accepted})`);
  }
  if (isLocal(text)) {
    if (!options.allowLocalPaths) {
      throw new ValidationError(`Local paths are not allowed as package specs (${JSON.stringify(text)}); an operator can enable them with allowLocalPaths (${accepted})`);
    }
    const resolved = path.resolve(text);
    return { name: resolved, spec: resolved, local: true };
  }
  if (SHELL_META.test(text)) throw new ValidationError(`The package spec ${JSON.stringify(text)} contains shell metacharacters (${accepted})`);
  const { name, rest } = splitName(text);
  const lower = name.toLowerCase();
  checkName(lower, text, accepted);
  if (rest === undefined) return { name: lower, spec: lower, local: false };
  if (rest.startsWith("npm:")) {
    const target = splitName(rest.slice(4));
    const targetName = target.name.toLowerCase();
    checkName(targetName, text, accepted);
    if (target.rest !== undefined) checkRange(target.rest, text, accepted);
    return { name: lower, spec: `${lower}@npm:${targetName}${target.rest !== undefined ? `@${target.rest.trim()}` : ""}`, local: false };
  }
  checkRange(rest, text, accepted);
  return { name: lower, spec: `${lower}@${rest.trim()}`, local: false };
}

function isLocal(text: string): boolean {
  return text.startsWith("./") || text.startsWith("../") || text.startsWith("/") || text.startsWith("~/") || text.startsWith("file:") || /\.(tgz|tar\.gz|tar)$/i.test(text);
}

/** `@scope/name@range` → name `@scope/name`, rest `range`. */
function splitName(text: string): { name: string; rest: string | undefined } {
  const at = text.indexOf("@", text.startsWith("@") ? 1 : 0);
  return at === -1 ? { name: text, rest: undefined } : { name: text.slice(0, at), rest: text.slice(at + 1) };
}

function checkName(name: string, spec: string, accepted: string): void {
  if (name.length > MAX_NAME_LENGTH) throw new ValidationError(`The package name in ${JSON.stringify(spec.slice(0, 60))}… is longer than ${MAX_NAME_LENGTH} characters (${accepted})`);
  if (!NAME_RE.test(name)) throw new ValidationError(`${JSON.stringify(name)} is not a valid npm package name (in ${JSON.stringify(spec)}) (${accepted})`);
}

function checkRange(range: string, spec: string, accepted: string): void {
  if (!range.trim() || !RANGE_RE.test(range)) throw new ValidationError(`The version range in ${JSON.stringify(spec)} is not a semver range or tag (${accepted})`);
}
