/**
 * The CLI tool YAML format (py-code-mode compatible) and its normalised, checked form.
 * `parseCliTool` is the only way a YAML document becomes a `CliToolSpec`: zod checks the shape,
 * then cross-field checks catch what a shape cannot (a recipe naming an unknown option, a default
 * of the wrong type, a required positional after an optional one). Every problem is reported with
 * the file, the field path and what is accepted, all at once, so a tool author fixes a file in one pass.
 */
import { z } from "zod";
import { fail, issueText, orEmpty, strict } from "../yaml-schema.js";
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
}

export interface CliToolSpec {
  name: string;
  description: string;
  /** Executable followed by fixed leading arguments (`[git, log]`). Never run through a shell. */
  command: string[];
  timeoutMs: number;
  /** Exit codes that mean success (`ok_exit_codes`, default [0]); e.g. grep exits 1 for "no match". */
  okExitCodes: number[];
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
const enumValues = z.array(z.union([z.string(), z.number()])).min(1, "enum needs at least one value");

const OptionSchema = orEmpty(
  strict({
    type: z.enum(VALUE_TYPES, { error: `expected one of ${VALUE_TYPES.join(", ")}` }).default("string"),
    short: z
      .union([z.string(), z.number()])
      .transform(String)
      .pipe(z.string().regex(/^[A-Za-z0-9?@#][A-Za-z0-9_-]*$/, "expected the flag letter(s) without a dash, e.g. 's' for -s"))
      .optional(),
    joined: z.boolean().default(false),
    description: z.string().default(""),
    required: z.boolean().default(false),
    default: z.json().optional(),
    enum: enumValues.optional(),
  }),
  () => ({}),
);

const PositionalSchema = strict({
  name: z.string().min(1),
  type: z
    .enum(POSITIONAL_TYPES, { error: `expected one of ${POSITIONAL_TYPES.join(", ")} (a boolean belongs in options)` })
    .default("string"),
  description: z.string().default(""),
  required: z.boolean().default(false),
  default: z.json().optional(),
  enum: enumValues.optional(),
});

const RecipeParamSchema = orEmpty(
  strict({ description: z.string().optional(), required: z.boolean().optional(), default: z.json().optional() }),
  () => ({}),
);

const RecipeSchema = orEmpty(
  strict({
    description: z.string().default(""),
    preset: orEmpty(z.record(z.string(), z.json()), () => ({})),
    params: orEmpty(z.record(z.string(), RecipeParamSchema), () => ({})),
  }),
  () => ({}),
);

const ToolSchema = strict({
  name: z.string({ error: "expected the tool name (a string)" }),
  type: z.literal("cli").optional(),
  description: z.string().default(""),
  command: z.union([z.string().min(1, "expected a non-empty executable name or path"), z.array(z.string().min(1, "expected a non-empty word")).min(1, "expected at least the executable")], {
    error: "expected an executable name or path, or a list like [git, log]",
  }).optional(),
  timeout: z.number().positive("expected a positive number of seconds").default(DEFAULT_TIMEOUT_SECONDS),
  ok_exit_codes: z.array(z.number().int().min(0).max(255), { error: "expected a list of exit codes (0-255)" }).min(1).optional(),
  tags: orEmpty(z.array(z.string()), () => []),
  schema: orEmpty(
    strict({
      options: orEmpty(z.record(z.string(), OptionSchema), () => ({})),
      positional: orEmpty(z.array(PositionalSchema), () => []),
    }),
    () => ({}),
  ),
  recipes: orEmpty(z.record(z.string(), RecipeSchema), () => ({})),
});





/** The parameter spec an option/positional has for argument checks and discovery. */
export function paramSpecOf(p: CliOption | CliPositional): ParamSpec {
  const spec: ParamSpec = { name: p.name, type: p.type, required: p.required && p.default === undefined };
  if (p.type === "array") spec.items = "string";
  if (p.description) spec.description = p.description;
  if (p.default !== undefined) spec.default = p.default;
  if (p.enum) spec.enum = p.enum;
  return spec;
}

/** Parse and check one CLI tool document. Throws ValidationError naming `source` and each bad field. */
export function parseCliTool(doc: unknown, source: string): CliToolSpec {
  const parsed = ToolSchema.safeParse(doc);
  if (!parsed.success) fail(source, parsed.error.issues.slice(0, 20).map((i) => issueText(i, doc)));
  const d = parsed.data;
  const problems: string[] = [];

  const nameProblem = toolNameProblem(d.name);
  if (nameProblem) problems.push(`name: ${nameProblem}`);

  const options: CliOption[] = [];
  const byName = new Map<string, CliOption | CliPositional>();
  const fieldPath = new Map<string, string>();
  const shorts = new Map<string, string>();
  for (const [name, o] of Object.entries(d.schema.options)) {
    const at = `schema.options.${name}`;
    if (!IDENTIFIER_RE.test(name)) problems.push(`${at}: option names must be identifiers like max_time (emitted as --max-time)`);
    const opt: CliOption = { name, type: o.type, joined: o.joined, description: o.description, required: o.required };
    if (o.short !== undefined) {
      opt.short = o.short;
      const other = shorts.get(o.short);
      if (other) problems.push(`${at}.short: '-${o.short}' is also the short flag of '${other}'`);
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
  d.schema.positional.forEach((p, i) => {
    const at = `schema.positional[${i}]`;
    if (!IDENTIFIER_RE.test(p.name)) problems.push(`${at}.name: positional names must be identifiers; got ${JSON.stringify(p.name)}`);
    if (byName.has(p.name)) problems.push(`${at}.name: '${p.name}' is already the name of an option or positional`);
    const pos: CliPositional = { name: p.name, type: p.type, description: p.description, required: p.required };
    if (p.default !== undefined) pos.default = p.default;
    if (p.enum) pos.enum = p.enum;
    const effectivelyRequired = p.required && p.default === undefined;
    if (effectivelyRequired && optionalSeen) {
      problems.push(`${at}: required positional '${p.name}' comes after optional '${optionalSeen}'; put required positionals first`);
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
    if (p.enum && (p.type === "boolean" || p.type === "array")) problems.push(`${at}.enum: enum is only for string, integer and number parameters`);
    if (p.default !== undefined) {
      const problem = valueProblem(paramSpecOf(p), p.default, "default");
      if (problem) problems.push(`${at}: ${problem}`);
    }
  }

  const recipes: CliRecipe[] = [];
  const accepted = [...byName.keys()].join(", ") || "(the schema declares no options or positionals)";
  for (const [rname, r] of Object.entries(d.recipes)) {
    const at = `recipes.${rname}`;
    const rProblem = recipeNameProblem(rname);
    if (rProblem) problems.push(`${at}: ${rProblem}`);
    for (const [key, value] of Object.entries(r.preset)) {
      const target = byName.get(key);
      if (!target) {
        problems.push(`${at}.preset.${key}: not an option or positional of the schema; accepted: ${accepted}`);
        continue;
      }
      const problem = valueProblem(paramSpecOf(target), value, key);
      if (problem) problems.push(`${at}.preset: ${problem}`);
    }
    const params: CliRecipeParam[] = [];
    for (const [pname, p] of Object.entries(r.params)) {
      const target = byName.get(pname);
      if (!target) {
        problems.push(`${at}.params.${pname}: not an option or positional of the schema; accepted: ${accepted}`);
        continue;
      }
      const param: CliRecipeParam = { name: pname };
      if (p.description !== undefined) param.description = p.description;
      if (p.required !== undefined) param.required = p.required;
      if (p.default !== undefined) {
        param.default = p.default;
        const problem = valueProblem(paramSpecOf(target), p.default, "default");
        if (problem) problems.push(`${at}.params.${pname}: ${problem}`);
      }
      params.push(param);
    }
    // A recipe that can never supply a required value would fail on every call; say so at load.
    for (const p of byName.values()) {
      if (!p.required || p.default !== undefined || p.name in r.preset) continue;
      if (!params.some((q) => q.name === p.name)) {
        problems.push(`${at}: required '${p.name}' is neither in params nor in preset, so the recipe could never run`);
      }
    }
    recipes.push({ name: rname, description: r.description, preset: r.preset, params });
  }

  if (problems.length) fail(source, problems);

  const command = d.command === undefined ? [d.name] : typeof d.command === "string" ? [d.command] : d.command;
  return {
    name: d.name,
    description: d.description,
    command,
    timeoutMs: Math.round(d.timeout * 1000),
    okExitCodes: d.ok_exit_codes ?? [0],
    tags: d.tags,
    options,
    positional,
    recipes,
    source,
  };
}
