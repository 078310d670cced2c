/**
 * Workflow names. A workflow is called as `workflows.<name>(args)`, so a name must be a plain
 * identifier and must not shadow one of the namespace's own methods (or a property that proxies
 * and promise resolution look up, such as `then`).
 */
import { InvalidNameError } from "../errors.js";
import { MAX_WORKFLOW_NAME_LENGTH, WORKFLOW_NAME_PATTERN } from "../storage/names.js";

export { MAX_WORKFLOW_NAME_LENGTH, WORKFLOW_NAME_PATTERN };

/** Methods of the `workflows` namespace plus names that JavaScript itself looks up on objects. */
export const RESERVED_WORKFLOW_NAMES: readonly string[] = Object.freeze([
  "list",
  "search",
  "get",
  "create",
  "delete",
  "invoke",
  "describe",
  "load",
  "then",
  "constructor",
  "prototype",
  "__proto__",
  "toString",
  "valueOf",
  "hasOwnProperty",
]);

const RESERVED = new Set(RESERVED_WORKFLOW_NAMES);
const ACCEPTED =
  "a workflow name is an identifier: a letter or underscore, then letters, digits or underscores " +
  `(at most ${MAX_WORKFLOW_NAME_LENGTH} characters), e.g. "scan_host"`;

/** True when `name` has the shape of a workflow name (reserved names aside). */
export function isWellFormedWorkflowName(name: unknown): name is string {
  return typeof name === "string" && name.length <= MAX_WORKFLOW_NAME_LENGTH && WORKFLOW_NAME_PATTERN.test(name);
}

/** True when `name` is one of the namespace's own members. */
export function isReservedWorkflowName(name: string): boolean {
  return RESERVED.has(name);
}

/** Throws InvalidNameError saying what was wrong with `name` and what is accepted. */
export function validateWorkflowName(name: unknown): asserts name is string {
  if (typeof name !== "string") {
    throw new InvalidNameError(`Workflow name must be a string, got ${name === null ? "null" : typeof name}; ${ACCEPTED}.`);
  }
  if (name.length === 0) throw new InvalidNameError(`Workflow name is empty; ${ACCEPTED}.`);
  if (name.length > MAX_WORKFLOW_NAME_LENGTH) {
    throw new InvalidNameError(
      `Workflow name is ${name.length} characters long; the limit is ${MAX_WORKFLOW_NAME_LENGTH}. ${capitalise(ACCEPTED)}.`,
    );
  }
  if (!WORKFLOW_NAME_PATTERN.test(name)) {
    const fixed = suggestName(name);
    const hint = fixed ? ` Try "${fixed}".` : "";
    throw new InvalidNameError(`Invalid workflow name ${JSON.stringify(name)}: ${ACCEPTED}.${hint}`);
  }
  if (RESERVED.has(name)) {
    throw new InvalidNameError(
      `Workflow name "${name}" is reserved: it is a member of the workflows namespace or of every object ` +
        `(reserved: ${RESERVED_WORKFLOW_NAMES.join(", ")}). Choose another name, e.g. "${name}_workflow".`,
    );
  }
}

/** A valid name close to an invalid one ("scan-host" → "scan_host"), or null when there is none. */
function suggestName(name: string): string | null {
  let fixed = name.replace(/[^A-Za-z0-9_]+/g, "_").replace(/^_+|_+$/g, "");
  if (/^[0-9]/.test(fixed)) fixed = `_${fixed}`;
  if (!fixed || fixed.length > MAX_WORKFLOW_NAME_LENGTH || RESERVED.has(fixed) || !WORKFLOW_NAME_PATTERN.test(fixed)) return null;
  return fixed;
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
