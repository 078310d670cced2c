/**
 * The one place where call arguments become an argv array. Rules (documented in docs/tools.md):
 *   argv = command words, then options in schema order, then positionals in schema order;
 *   an option with `short` is `-s value`, otherwise `--long-name value` (`_` in the key → `-`);
 *   `joined: true` puts the value in the flag's word (`--color=never`, `-n5`);
 *   booleans emit the bare flag only when true; arrays repeat the flag once per element;
 *   numbers are written with String(); absent (undefined/null) values emit nothing.
 * Values are never interpreted by a shell: each value is exactly one argv element.
 *
 * No value is ever read as an option by the command (option injection: `--file=/etc/shadow`
 * given as date's format, `--files0-from=...` as a file of wc):
 *   - an option value that starts with '-' is always written in the flag's own word
 *     (`--name=-x`, `-s-x`), so it cannot become an option of its own;
 *   - positionals follow `--` when the YAML says `end_of_options: true` (the command reads `--`
 *     as "no options after this", as getopt does);
 *   - otherwise a positional value that starts with '-' is refused, unless the positional says
 *     `allow_leading_dash: true` (the author vouches the command never reads it as an option).
 */
import { ToolError } from "../../../errors.js";
import { callLabel, describeValue } from "../../validate.js";
import type { CliOption, CliPositional, CliRecipe, CliToolSpec } from "./schema.js";

/**
 * Effective values for one call, lowest precedence first:
 *   schema defaults < recipe preset < recipe param defaults < caller's args.
 * A schema default is the tool-wide fallback; a preset is the recipe's deliberate choice, so it
 * wins over the schema default; a recipe param default is what the recipe uses when the caller
 * leaves that param out. `args` must already be validated (registry → validateArgs).
 */
export function mergeArgs(spec: CliToolSpec, recipe: CliRecipe | null, args: Record<string, unknown>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const p of [...spec.options, ...spec.positional]) {
    if (p.default !== undefined) values[p.name] = p.default;
  }
  if (recipe) {
    Object.assign(values, recipe.preset);
    for (const p of recipe.params) {
      if (p.default !== undefined) values[p.name] = p.default;
    }
  }
  for (const [k, v] of Object.entries(args)) {
    if (v !== undefined && v !== null) values[k] = v;
  }
  return values;
}

// Unreachable after validateArgs; kept so a direct adapter caller cannot smuggle objects into argv.
function invalid(spec: CliToolSpec, callable: string | null, name: string, expected: string, value: unknown): never {
  throw new ToolError({
    tool: spec.name,
    callable,
    code: "INVALID_INPUT",
    message: `${callLabel(spec.name, callable)}: '${name}' must be ${expected}, got ${describeValue(value)}`,
  });
}

function scalarText(spec: CliToolSpec, callable: string | null, name: string, value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return invalid(spec, callable, name, "a string or number", value);
}

function optionWords(opt: CliOption, text: string): string[] {
  // A separate word starting with '-' could be parsed as an option (by a command whose option
  // takes an optional value, or that does not use getopt); inside the flag's word it cannot.
  const joined = opt.joined || text.startsWith("-");
  if (opt.short !== undefined) return joined ? [`-${opt.short}${text}`] : [`-${opt.short}`, text];
  const long = `--${opt.name.replace(/_/g, "-")}`;
  return joined ? [`${long}=${text}`] : [long, text];
}

/** The text of a positional value, refused when the command would read it as an option. */
function positionalText(spec: CliToolSpec, callable: string | null, pos: CliPositional, value: unknown): string {
  const text = scalarText(spec, callable, pos.name, value);
  if (!text.startsWith("-") || spec.endOfOptions || pos.allowLeadingDash) return text;
  const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  throw new ToolError({
    tool: spec.name,
    callable,
    code: "INVALID_INPUT",
    message:
      `${callLabel(spec.name, callable)}: '${pos.name}' cannot start with '-' (got ${JSON.stringify(shown)}): ` +
      `${spec.command[0] ?? spec.name} would read it as an option. For a file name, write './${shown}'. ` +
      `(The tool's YAML can allow it with end_of_options: true, if the command accepts '--', or allow_leading_dash: true on '${pos.name}'.)`,
  });
}

function flagOnly(opt: CliOption): string {
  return opt.short !== undefined ? `-${opt.short}` : `--${opt.name.replace(/_/g, "-")}`;
}

/** Build the argv array (executable first) for already-merged values. */
export function buildArgv(spec: CliToolSpec, values: Record<string, unknown>, callable: string | null = null): string[] {
  const argv = [...spec.command];
  for (const opt of spec.options) {
    const v = values[opt.name];
    if (v === undefined || v === null) continue;
    if (opt.type === "boolean") {
      if (v === true) argv.push(flagOnly(opt));
      else if (v !== false) invalid(spec, callable, opt.name, "a boolean", v);
      continue;
    }
    if (opt.type === "array") {
      const items: unknown[] = Array.isArray(v) ? v : [v];
      for (const item of items) argv.push(...optionWords(opt, scalarText(spec, callable, opt.name, item)));
      continue;
    }
    argv.push(...optionWords(opt, scalarText(spec, callable, opt.name, v)));
  }
  let missing: CliPositional | null = null;
  const positionals: string[] = [];
  for (const pos of spec.positional) {
    const v = values[pos.name];
    if (v === undefined || v === null) {
      missing ??= pos;
      continue;
    }
    if (missing) {
      // Positionals are matched by position, so a gap would shift this value into the wrong slot.
      throw new ToolError({
        tool: spec.name,
        callable,
        code: "INVALID_INPUT",
        message: `${callLabel(spec.name, callable)}: '${pos.name}' cannot be given without '${missing.name}' (positionals are passed in order: ${spec.positional.map((p) => p.name).join(", ")})`,
      });
    }
    const items: unknown[] = pos.type === "array" && Array.isArray(v) ? v : [v];
    for (const item of items) positionals.push(positionalText(spec, callable, pos, item));
  }
  if (positionals.length && spec.endOfOptions) argv.push("--");
  argv.push(...positionals);
  return argv;
}

/**
 * The recipes (other than `recipe`) that can run exactly the argv this call runs: a rule written for
 * `date.epoch` must also stop `tools.date({ format: "+%s" })`, which runs the same command. Each
 * candidate recipe is given the call's values for its own params (an absent boolean as false, its
 * one way to emit nothing), and matches when the argv it would build is the call's argv word for word.
 * A call whose argv cannot be built matches nothing (the call itself fails with that error).
 */
export function recipesWithSameArgv(spec: CliToolSpec, recipe: CliRecipe | null, args: Record<string, unknown>): string[] {
  const argvOf = (r: CliRecipe | null, a: Record<string, unknown>): string[] | null => {
    try {
      return buildArgv(spec, mergeArgs(spec, r, a), r?.name ?? null);
    } catch {
      return null;
    }
  };
  const values = mergeArgs(spec, recipe, args);
  const argv = argvOf(recipe, args);
  if (!argv) return [];
  const types = new Map([...spec.options, ...spec.positional].map((p) => [p.name, p.type]));
  const same: string[] = [];
  for (const candidate of spec.recipes) {
    if (candidate === recipe) continue;
    const given: Record<string, unknown> = {};
    for (const p of candidate.params) {
      const v = values[p.name];
      if (v !== undefined && v !== null) given[p.name] = v;
      else if (types.get(p.name) === "boolean") given[p.name] = false;
    }
    const other = argvOf(candidate, given);
    if (other && other.length === argv.length && other.every((w, i) => w === argv[i])) same.push(candidate.name);
  }
  return same;
}
