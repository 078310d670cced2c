/**
 * Python package specs an agent may ask for: the part of PEP 508 that names a package on an index.
 *
 *   name                    requests, typing_extensions, zope.interface
 *   name[extras]            requests[socks]
 *   name<specifiers>        requests>=2, six==1.17.*, idna>=3,<4, pkg~=1.4, (>=1,<2)
 *
 * Refused with a reason: URLs and direct references (`pkg @ https://…`, `git+https://…`), local paths
 * (`./pkg`, `/abs/x.whl`), pip options (`--index-url x`, `-r file`), environment markers (`; …`: they
 * could smuggle anything pip accepts after a semicolon, and an agent installs for this machine anyway),
 * and anything else outside the grammar. What pip receives is rebuilt from the parsed parts, so it is
 * always `name[extras]specifiers` with no spaces — never an option, a path or a shell word.
 */
import { ValidationError } from "../../errors.js";
import type { DepSpec } from "../spec.js";

/** PyPI limits project names well below this; it bounds what we echo back. */
export const MAX_PYTHON_NAME_LENGTH = 200;
const MAX_SPEC_LENGTH = 1_000;
/** PEP 508 identifier: letters/digits, with `.`, `_`, `-` inside. */
const NAME = "[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?";
const NAME_RE = new RegExp(`^${NAME}$`);
/** One version clause: an operator, then a PEP 440 version (epoch `1!`, wildcard `.*`, local `+cpu`). */
const CLAUSE_RE = /^\s*(~=|===|==|!=|<=|>=|<|>)\s*([A-Za-z0-9.*+!_-]+)\s*$/;
const ACCEPTED =
  "accepted: a package name with optional extras and version specifiers, e.g. requests, requests>=2, requests[socks]>=2,<3, six==1.17.*";

/** PEP 503 normalised name: the key of an entry (`Typing_Extensions` and `typing-extensions` are one). */
export function normalizePythonName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}

/** Parse one spec. Throws ValidationError saying what is wrong and what is accepted. */
export function parsePythonSpec(raw: unknown): DepSpec {
  if (typeof raw !== "string") throw new ValidationError(`A Python package spec must be a string; got ${raw === null ? "null" : typeof raw} (${ACCEPTED})`);
  const text = raw.trim();
  const shown = JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
  if (!text) throw new ValidationError(`The Python package spec is empty (${ACCEPTED})`);
  if (text.length > MAX_SPEC_LENGTH) throw new ValidationError(`The Python package spec ${shown} is longer than ${MAX_SPEC_LENGTH} characters (${ACCEPTED})`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(text)) throw new ValidationError(`The Python package spec ${shown} contains control characters (${ACCEPTED})`);
  if (text.startsWith("-")) throw new ValidationError(`pip options are not allowed in a package spec (${shown}): the index and other settings come from the machine's pip configuration (${ACCEPTED})`);
  if (/:\/\/|^[a-z][a-z0-9+.-]*:/i.test(text) || text.includes("@")) {
    throw new ValidationError(`URLs, VCS and direct references are not allowed (${shown}): packages come from the configured index by name (${ACCEPTED})`);
  }
  if (/^[.~/\\]/.test(text) || /\.(whl|zip|tar\.gz|tgz|tar)$/i.test(text)) throw new ValidationError(`Local paths and archives are not allowed as package specs (${shown}) (${ACCEPTED})`);
  if (text.includes(";")) throw new ValidationError(`Environment markers (\`; …\`) are not allowed in a package spec (${shown}) (${ACCEPTED})`);

  const match = new RegExp(`^(${NAME})\\s*(?:\\[([^\\]]*)\\])?\\s*(.*)$`).exec(text);
  const name = match?.[1];
  if (!match || name === undefined) throw new ValidationError(`${shown} does not start with a valid Python package name (${ACCEPTED})`);
  if (name.length > MAX_PYTHON_NAME_LENGTH) throw new ValidationError(`The package name in ${shown} is longer than ${MAX_PYTHON_NAME_LENGTH} characters (${ACCEPTED})`);
  const extras = match[2] === undefined ? [] : match[2].split(",").map((e) => e.trim());
  for (const extra of extras) if (!NAME_RE.test(extra)) throw new ValidationError(`The extras in ${shown} must be package-style names separated by commas (${ACCEPTED})`);
  let versions = match[3] ?? "";
  if (versions.startsWith("(") && versions.endsWith(")")) versions = versions.slice(1, -1);
  const clauses = (versions === "" ? [] : versions.split(",")).map((clause) => {
    const m = CLAUSE_RE.exec(clause);
    if (!m) throw new ValidationError(`The version specifier ${JSON.stringify(clause.trim())} in ${shown} is not one of ~= == != <= >= < > === followed by a version (${ACCEPTED})`);
    return `${m[1]}${m[2]}`;
  });
  const key = normalizePythonName(name);
  const spec = `${key}${extras.length ? `[${extras.map((e) => e.toLowerCase()).join(",")}]` : ""}${clauses.join(",")}`;
  return { name: key, spec, local: false };
}
