/**
 * The CLI tool YAML format (py-code-mode compatible) and its normalised, checked form.
 * `parseCliTool` is the only way a YAML document becomes a `CliToolSpec`: zod checks the shape,
 * then cross-field checks catch what a shape cannot (a recipe naming an unknown option, a default
 * of the wrong type, a required positional after an optional one). Every problem is reported with
 * the file, the field path and what is accepted, all at once, so a tool author fixes a file in one pass.
 */
import { z } from "zod";
import { lazy } from "../../../lazy.js";
import { fail, isMapping, orEmpty, Problems, strict } from "../yaml-schema.js";
import type { JsonValue } from "../../../storage/protocol.js";
import type { ParamSpec } from "../../protocol.js";
import { IDENTIFIER_RE, recipeNameProblem, toolNameProblem, valueProblem } from "../../validate.js";

export type CliValueType = "boolean" | "string" | "integer" | "number" | "array";
export type CliPositionalType = Exclude<CliValueType, "boolean">;

export interface CliOption {
  name: string;
  type: CliValueType;
  /** Without the dash: `s` → `-s`. */
  short?: string;
  /** Emit the value in the flag's own word: `--name=value` / `-svalue`. */
  joined: boolean;
  description: string;
  required: boolean;
  default?: JsonValue;
  enum?: JsonValue[];
}

export interface CliPositional {
  name: string;
  type: CliPositionalType;
  description: string;
  required: boolean;
  /**
   * `allow_leading_dash: true`: a value may start with '-' even though the command does not take
   * `--` (the author vouches that the command never reads this value as an option).
   */
  allowLeadingDash: boolean;
  default?: JsonValue;
  enum?: JsonValue[];
}

export interface CliRecipeParam {
  /** Name of a schema option or positional. */
  name: string;
  description?: string;
  required?: boolean;
  default?: JsonValue;
}

export interface CliRecipe {
  name: string;
  description: string;
  preset: Record<string, JsonValue>;
  params: CliRecipeParam[];
  /** `needs_approval` of the recipe (or the tool's): the reason a reviewer is shown, or undefined. */
  needsApproval?: string;
  /**
   * `revert: { recipe, args }`: how `session.rollback(runId)` undoes a call of this recipe. String
   * values may hold `{{args.NAME}}` (the call's argument) and `{{result}}` (its trimmed stdout).
   */
  revert?: { recipe: string; args: Record<string, JsonValue> };
}

export interface CliToolSpec {
  name: string;
  description: string;
  /** Executable followed by fixed leading arguments (`[git, log]`). Never run through a shell. */
  command: string[];
  timeoutMs: number;
  /** Exit codes that mean success (`ok_exit_codes`, default [0]); e.g. grep exits 1 for "no match". */
  okExitCodes: number[];
  /**
   * `end_of_options: true`: the command reads `--` as "no options after this" (getopt does), so
   * argv.ts writes `--` before the positionals and they may start with '-'.
   */
  endOfOptions: boolean;
  /**
   * `confine: true`: every call runs under bubblewrap (confine.ts), seeing the system folders and the
   * working folder read-only and nothing else of the host; refused where bwrap is missing. (In a
   * container session the command runs in the container, which confines it already.)
   */
  confine: boolean;
  /**
   * `runs_on: host`: the command runs on the host even in a container session (it sees the host's
   * files, not the guest's); the default, "session", runs it where the session's code runs.
   */
  runsOn: "session" | "host";
  /** `needs_approval` at the top: every call waits for a human's decision (the text: why). */
  needsApproval?: string;
  tags: string[];
  options: CliOption[];
  positional: CliPositional[];
  recipes: CliRecipe[];
  /** Where the definition came from (a file path), for messages. */
  source: string;
}

export const DEFAULT_TIMEOUT_SECONDS = 60;

const VALUE_TYPES = ["boolean", "string", "integer", "number", "array"] as const;
const POSITIONAL_TYPES = ["string", "integer", "number", "array"] as const;
const enumValues = lazy(() => z.array(z.union([z.string(), z.number()])).min(1, "enum needs at least one value"));

const OptionSchema = lazy(() => orEmpty(
  strict({
    type: z.enum(VALUE_TYPES, { error: `expected one of ${VALUE_TYPES.join(", ")}` }).default("string"),
    // One character: `short: aa` would be emitted as `-aa`, which getopt reads as `-a -a`.
    short: z
      .union([z.string(), z.number()])
      .transform(String)
      .pipe(z.string().regex(/^[A-Za-z0-9?@#]$/, "expected one flag character without a dash, e.g. 's' for -s (a multi-letter flag is a long option: use the option's name)"))
      .optional(),
    joined: z.boolean().default(false),
    description: z.string().default(""),
    required: z.boolean().default(false),
    default: z.json().optional(),
    enum: enumValues.optional(),
  }),
  () => ({}),
));

const PositionalSchema = lazy(() => strict({
  name: z.string({ error: "expected the positional's name (a string)" }).min(1),
  type: z
    .enum(POSITIONAL_TYPES, { error: `expected one of ${POSITIONAL_TYPES.join(", ")} (a boolean belongs in options)` })
    .default("string"),
  description: z.string().default(""),
  required: z.boolean().default(false),
  allow_leading_dash: z.boolean().default(false),
  default: z.json().optional(),
  enum: enumValues.optional(),
}));

const RecipeParamSchema = lazy(() => orEmpty(
  strict({ description: z.string().optional(), required: z.boolean().optional(), default: z.json().optional() }),
  () => ({}),
));

/** `needs_approval: true` or the reason a reviewer is shown. */
const needsApprovalField = () => z.union([z.boolean(), z.string().min(1)], { error: "expected true/false or the reason a reviewer is shown" });

const RecipeSchema = lazy(() => orEmpty(
  strict({
    description: z.string().default(""),
    preset: orEmpty(z.record(z.string(), z.json()), () => ({})),
    params: orEmpty(z.record(z.string(), RecipeParamSchema), () => ({})),
    needs_approval: needsApprovalField().optional(),
    revert: strict({ recipe: z.string({ error: "expected the name of the recipe that undoes this one" }), args: orEmpty(z.record(z.string(), z.json()), () => ({})) }).optional(),
  }),
  () => ({}),
));

/** A mapping whose entries are checked one by one (so one bad entry does not hide the rest). */
const mappingOf = (what: string) => orEmpty(z.record(z.string(), z.unknown(), { error: `expected a mapping of ${what}` }), () => ({}));

/** Top-level fields; `schema` and `recipes` are checked entry by entry below. */
const TOP_FIELDS = lazy(() => ({
  name: z.string({ error: "expected the tool name (a string)" }),
  type: z.literal("cli").optional(),
  description: z.string().default(""),
  command: z.union([z.string().min(1, "expected a non-empty executable name or path"), z.array(z.string().min(1, "expected a non-empty word")).min(1, "expected at least the executable")], {
    error: "expected an executable name or path, or a list like [git, log]",
  }).optional(),
  timeout: z.number().positive("expected a positive number of seconds").default(DEFAULT_TIMEOUT_SECONDS),
  ok_exit_codes: z.array(z.number().int().min(0).max(255), { error: "expected a list of exit codes (0-255)" }).min(1).optional(),
  end_of_options: z.boolean({ error: "expected true when the command reads `--` as the end of its options, else false" }).default(false),
  confine: z.boolean({ error: "expected true to run the command in the OS sandbox (bubblewrap), else false" }).default(false),
  needs_approval: needsApprovalField().default(false),
  runs_on: z.enum(["session", "host"], { error: 'expected "session" (where the code runs: inside a container session\'s container) or "host"' }).default("session"),
  tags: orEmpty(z.array(z.string()), () => []),
  schema: orEmpty(z.record(z.string(), z.unknown(), { error: "expected a mapping with options and positional" }), () => ({})),
  recipes: mappingOf("recipe names to recipes"),
}));

const SCHEMA_FIELDS = lazy(() => ({
  options: mappingOf("option names to options"),
  positional: orEmpty(z.array(z.unknown(), { error: "expected a list of positionals" }), () => []),
}));

/** The parameter spec an option/positional has for argument checks and discovery. */
export function paramSpecOf(p: CliOption | CliPositional): ParamSpec {
  const spec: ParamSpec = { name: p.name, type: p.type, required: p.required && p.default === undefined };
  if (p.type === "array") spec.items = "string";
  if (p.description) spec.description = p.description;
  if (p.default !== undefined) spec.default = p.default;
  if (p.enum) spec.enum = p.enum;
  return spec;
}

/**
 * Why a value the YAML itself gives a positional (default, preset) would be refused at every call
 * (argv.ts refuses a leading '-' unless `--` or allow_leading_dash makes it safe), or null.
 */
function dashProblem(p: CliPositional, endOfOptions: boolean, value: unknown): string | null {
  if (endOfOptions || p.allowLeadingDash) return null;
  const items: unknown[] = Array.isArray(value) ? value : [value];
  const bad = items.find((v) => (typeof v === "string" || typeof v === "number") && String(v).startsWith("-"));
  if (bad === undefined) return null;
  return `'${p.name}' value ${JSON.stringify(bad)} starts with '-', which the command would read as an option; set end_of_options: true (if the command accepts --) or allow_leading_dash: true on the positional`;
}

/** Parse and check one CLI tool document. Throws ValidationError naming `source` and every bad field. */
export function parseCliTool(doc: unknown, source: string): CliToolSpec {
  const problems = new Problems(doc);
  if (!isMapping(doc)) fail(source, ["(top level): expected a mapping with name, description, command, schema, recipes"]);
  const { data: d } = problems.fields(TOP_FIELDS, doc, []);

  if (d.name !== undefined) {
    const nameProblem = toolNameProblem(d.name);
    if (nameProblem) problems.add(`name: ${nameProblem}`);
  }
  const endOfOptions = d.end_of_options ?? false;

  const schemaParts = d.schema ? problems.fields(SCHEMA_FIELDS, d.schema, ["schema"]).data : { options: undefined, positional: undefined };
  /** False when a whole block failed: then names that are "missing" may just be unreadable. */
  let namesComplete = schemaParts.options !== undefined && schemaParts.positional !== undefined;
  /** Declared, but with problems of their own (reported already); references to them are not unknown. */
  const brokenNames = new Set<string>();

  const options: CliOption[] = [];
  const byName = new Map<string, CliOption | CliPositional>();
  const fieldPath = new Map<string, string>();
  const shorts = new Map<string, string>();
  for (const [name, raw] of Object.entries(schemaParts.options ?? {})) {
    const at = `schema.options.${name}`;
    if (!IDENTIFIER_RE.test(name)) problems.add(`${at}: option names must be identifiers like max_time (emitted as --max-time)`);
    const o = problems.parse(OptionSchema, raw, ["schema", "options", name]);
    if (!o) {
      brokenNames.add(name);
      continue;
    }
    const opt: CliOption = { name, type: o.type, joined: o.joined, description: o.description, required: o.required };
    if (o.short !== undefined) {
      opt.short = o.short;
      const other = shorts.get(o.short);
      if (other) problems.add(`${at}.short: '-${o.short}' is also the short flag of '${other}'`);
      shorts.set(o.short, name);
    }
    if (o.default !== undefined) opt.default = o.default;
    if (o.enum) opt.enum = o.enum;
    options.push(opt);
    byName.set(name, opt);
    fieldPath.set(name, at);
  }

  const positional: CliPositional[] = [];
  let optionalSeen: string | null = null;
  (schemaParts.positional ?? []).forEach((raw, i) => {
    const at = `schema.positional[${i}]`;
    const p = problems.parse(PositionalSchema, raw, ["schema", "positional", i]);
    if (!p) {
      const name = isMapping(raw) && typeof raw["name"] === "string" ? raw["name"] : null;
      if (name) brokenNames.add(name);
      else namesComplete = false;
      return;
    }
    if (!IDENTIFIER_RE.test(p.name)) problems.add(`${at}.name: positional names must be identifiers; got ${JSON.stringify(p.name)}`);
    if (byName.has(p.name) || brokenNames.has(p.name)) problems.add(`${at}.name: '${p.name}' is already the name of an option or positional`);
    const pos: CliPositional = { name: p.name, type: p.type, description: p.description, required: p.required, allowLeadingDash: p.allow_leading_dash };
    if (p.default !== undefined) pos.default = p.default;
    if (p.enum) pos.enum = p.enum;
    const effectivelyRequired = p.required && p.default === undefined;
    if (effectivelyRequired && optionalSeen) {
      problems.add(`${at}: required positional '${p.name}' comes after optional '${optionalSeen}'; put required positionals first`);
    }
    if (!effectivelyRequired && p.default === undefined) optionalSeen ??= p.name;
    positional.push(pos);
    if (!byName.has(p.name)) {
      byName.set(p.name, pos);
      fieldPath.set(p.name, at);
    }
  });

  // Defaults and enums are checked with the same rules as call arguments.
  for (const p of byName.values()) {
    const at = fieldPath.get(p.name) ?? p.name;
    if (p.enum && (p.type === "boolean" || p.type === "array")) problems.add(`${at}.enum: enum is only for string, integer and number parameters`);
    if (p.default !== undefined) {
      const problem = valueProblem(paramSpecOf(p), p.default, "default") ?? ("allowLeadingDash" in p ? dashProblem(p, endOfOptions, p.default) : null);
      if (problem) problems.add(`${at}: ${problem}`);
    }
  }

  const recipes: CliRecipe[] = [];
  const accepted = [...byName.keys()].join(", ") || "(the schema declares no options or positionals)";
  /** A reference to a name the schema lacks; silent when that name may be among the unreadable ones. */
  const unknownName = (at: string, key: string) => {
    if (brokenNames.has(key) || !namesComplete) return;
    problems.add(`${at}: not an option or positional of the schema; accepted: ${accepted}`);
  };
  for (const [rname, raw] of Object.entries(d.recipes ?? {})) {
    const at = `recipes.${rname}`;
    const rProblem = recipeNameProblem(rname);
    if (rProblem) problems.add(`${at}: ${rProblem}`);
    const r = problems.parse(RecipeSchema, raw, ["recipes", rname]);
    if (!r) continue;
    for (const [key, value] of Object.entries(r.preset)) {
      const target = byName.get(key);
      if (!target) {
        unknownName(`${at}.preset.${key}`, key);
        continue;
      }
      const problem = valueProblem(paramSpecOf(target), value, key) ?? ("allowLeadingDash" in target ? dashProblem(target, endOfOptions, value) : null);
      if (problem) problems.add(`${at}.preset: ${problem}`);
    }
    const params: CliRecipeParam[] = [];
    for (const [pname, p] of Object.entries(r.params)) {
      const target = byName.get(pname);
      if (!target) {
        unknownName(`${at}.params.${pname}`, pname);
        continue;
      }
      const param: CliRecipeParam = { name: pname };
      if (p.description !== undefined) param.description = p.description;
      if (p.required !== undefined) param.required = p.required;
      if (p.default !== undefined) {
        param.default = p.default;
        const problem = valueProblem(paramSpecOf(target), p.default, "default") ?? ("allowLeadingDash" in target ? dashProblem(target, endOfOptions, p.default) : null);
        if (problem) problems.add(`${at}.params.${pname}: ${problem}`);
      }
      params.push(param);
    }
    // A recipe that can never supply a required value would fail on every call; say so at load.
    for (const p of byName.values()) {
      if (!p.required || p.default !== undefined || p.name in r.preset) continue;
      if (!params.some((q) => q.name === p.name)) {
        problems.add(`${at}: required '${p.name}' is neither in params nor in preset, so the recipe could never run`);
      }
    }
    const recipe: CliRecipe = { name: rname, description: r.description, preset: r.preset, params };
    const approval = approvalReason(r.needs_approval) ?? approvalReason(d.needs_approval);
    if (approval) recipe.needsApproval = approval;
    if (r.revert) recipe.revert = { recipe: r.revert.recipe, args: r.revert.args };
    recipes.push(recipe);
  }
  for (const r of recipes) {
    if (r.revert && !recipes.some((q) => q.name === r.revert!.recipe)) problems.add(`recipes.${r.name}.revert.recipe: no recipe named '${r.revert.recipe}' in this tool`);
  }

  problems.throwIfAny(source);
  // Every field parsed (else throwIfAny threw), so the required ones are present.
  const name = d.name!;
  const command = d.command === undefined ? [name] : typeof d.command === "string" ? [d.command] : d.command;
  return {
    name,
    description: d.description ?? "",
    command,
    timeoutMs: Math.round((d.timeout ?? DEFAULT_TIMEOUT_SECONDS) * 1000),
    okExitCodes: d.ok_exit_codes ?? [0],
    endOfOptions,
    confine: d.confine ?? false,
    runsOn: d.runs_on ?? "session",
    ...(approvalReason(d.needs_approval) ? { needsApproval: approvalReason(d.needs_approval)! } : {}),
    tags: d.tags ?? [],
    options,
    positional,
    recipes,
    source,
  };
}

/** `needs_approval` as the reason shown to a reviewer; undefined when not set or false. */
function approvalReason(v: boolean | string | undefined): string | undefined {
  if (v === undefined || v === false) return undefined;
  return v === true ? "this tool is marked needs_approval" : v;
}
