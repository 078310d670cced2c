/**
 * A CLI tool defined in YAML: recipes become callables, the whole schema is the escape hatch
 * `tools.<name>(args)`. Calls merge defaults and presets, build argv (argv.ts) and run it without
 * a shell (run.ts). Argument checking happens before, in the registry (validate.ts), against the
 * `ToolInfo` built here — so what `describe` shows is exactly what a call accepts.
 */
import { ToolError, didYouMean } from "../../../errors.js";
import type { CallContext, CallableInfo, ParamSpec, ToolAdapter, ToolInfo } from "../../protocol.js";
import type { JsonValue } from "../../../storage/protocol.js";
import { buildArgv, mergeArgs, recipesWithSameArgv } from "./argv.js";
import { confinedArgv } from "./confine.js";
import { runCommand } from "./run.js";
import { paramSpecOf, parseCliTool, type CliOption, type CliPositional, type CliRecipe, type CliToolSpec } from "./schema.js";

function recipeCallable(spec: CliToolSpec, recipe: CliRecipe): CallableInfo {
  const targets = new Map<string, CliOption | CliPositional>([...spec.options, ...spec.positional].map((p) => [p.name, p]));
  const params: ParamSpec[] = [];
  for (const p of recipe.params) {
    const target = targets.get(p.name);
    if (!target) continue; // parseCliTool rejects unknown names; keep the type checker honest.
    const base = paramSpecOf(target);
    // What the recipe would use if the caller leaves this param out (see mergeArgs).
    const effectiveDefault = p.default ?? recipe.preset[p.name] ?? target.default;
    const param: ParamSpec = { ...base, required: (p.required ?? target.required) && effectiveDefault === undefined };
    delete param.default;
    if (effectiveDefault !== undefined) param.default = effectiveDefault;
    const description = p.description ?? target.description;
    if (description) param.description = description;
    params.push(param);
  }
  return { name: recipe.name, description: recipe.description, params, returns: "string" };
}

/**
 * The discovery/validation view of a CLI tool. The escape hatch lists required params first, then
 * positionals, then options (argv order is separate and fixed by argv.ts).
 */
export function cliToolInfo(spec: CliToolSpec): ToolInfo {
  const all = [...spec.positional, ...spec.options].map(paramSpecOf);
  const direct: CallableInfo = {
    name: spec.name,
    description: `Run \`${spec.command.join(" ")}\` with any option or positional of its schema.`,
    params: [...all.filter((p) => p.required), ...all.filter((p) => !p.required)],
    returns: "string",
  };
  return {
    name: spec.name,
    type: "cli",
    // Said where the agent reads it (tools.list/describe, the run_code description): this tool sees the host's files.
    description: spec.runsOn === "host" ? `${spec.description} [runs_on: host — runs on the host, outside a container session's container]` : spec.description,
    tags: [...spec.tags],
    callables: spec.recipes.map((r) => recipeCallable(spec, r)),
    direct,
  };
}

export class CliToolAdapter implements ToolAdapter {
  readonly name: string;
  private readonly toolInfo: ToolInfo;

  constructor(readonly spec: CliToolSpec) {
    this.name = spec.name;
    this.toolInfo = cliToolInfo(spec);
  }

  /** Parse a YAML document (already loaded) from `source`. Throws ValidationError. */
  static fromDocument(doc: unknown, source: string): CliToolAdapter {
    return new CliToolAdapter(parseCliTool(doc, source));
  }

  async info(): Promise<ToolInfo> {
    return this.toolInfo;
  }

  /** The program this tool starts where the session's code runs (none for runs_on: host). */
  commandsWhereCodeRuns(): string[] {
    return this.spec.runsOn === "host" ? [] : [this.spec.command[0]!];
  }

  /** `args` are expected to be validated already (ToolRegistry does it); argv.ts re-checks what it emits. */
  async call(callable: string | null, args: Record<string, unknown>, ctx: CallContext): Promise<string> {
    let recipe: CliRecipe | null = null;
    if (callable !== null) {
      recipe = this.spec.recipes.find((r) => r.name === callable) ?? null;
      if (!recipe) {
        const names = this.spec.recipes.map((r) => r.name);
        throw new ToolError({
          tool: this.name,
          callable,
          code: "NOT_FOUND",
          message: `Unknown recipe '${callable}' of tool '${this.name}'.${didYouMean(callable, names)} Available: ${names.join(", ") || "(none)"}`,
        });
      }
    }
    const argv = buildArgv(this.spec, mergeArgs(this.spec, recipe, args), callable);
    const timeoutMs = ctx.timeoutMs !== undefined ? Math.min(this.spec.timeoutMs, ctx.timeoutMs) : this.spec.timeoutMs;
    const options = { tool: this.name, callable, timeoutMs, okExitCodes: this.spec.okExitCodes };
    const runOptions = ctx.signal ? { ...options, signal: ctx.signal } : options;
    // Where the session's code runs (a container session's container, which confines it), unless the YAML says runs_on: host.
    if (this.spec.runsOn !== "host" && ctx.place) return ctx.place.run(argv, runOptions);
    // confine: the working folder read-only and nothing else of the host (refused without bwrap).
    const run = this.spec.confine ? confinedArgv(argv, { root: process.cwd(), tool: this.name, label: `tools.${this.name}` }) : argv;
    return runCommand(run, runOptions);
  }

  /** Recipes that would run this call's argv word for word (policy and approval rules on them cover it). */
  sameCommandAs(callable: string | null, args: Record<string, unknown>): string[] {
    const recipe = callable === null ? null : (this.spec.recipes.find((r) => r.name === callable) ?? null);
    if (callable !== null && !recipe) return [];
    return recipesWithSameArgv(this.spec, recipe, args);
  }

  async close(): Promise<void> {
    // Nothing is kept open between calls: every call is its own process.
  }

  approvalNeeded(callable: string | null): string | null {
    if (callable === null) return this.spec.needsApproval ?? null;
    return this.spec.recipes.find((r) => r.name === callable)?.needsApproval ?? null;
  }

  revertOf(callable: string | null, args: Record<string, unknown>, result: unknown): { callable: string; args: Record<string, unknown> } | null {
    const revert = callable === null ? undefined : this.spec.recipes.find((r) => r.name === callable)?.revert;
    if (!revert) return null;
    return { callable: revert.recipe, args: fillRevertArgs(revert.args, args, typeof result === "string" ? result.trim() : "") };
  }
}

/**
 * A revert recipe's arguments: `{{args.NAME}}` becomes the call's argument (its value as is when it
 * is the whole string, else its text), `{{result}}` the call's trimmed stdout.
 */
export function fillRevertArgs(template: Record<string, JsonValue>, args: Record<string, unknown>, result: string): Record<string, unknown> {
  const one = (v: JsonValue): unknown => {
    if (typeof v !== "string") return v;
    const whole = /^\{\{\s*(args\.([A-Za-z0-9_-]+)|result)\s*\}\}$/.exec(v);
    if (whole) return whole[2] !== undefined ? args[whole[2]] : result;
    return v.replace(/\{\{\s*(args\.([A-Za-z0-9_-]+)|result)\s*\}\}/g, (_m, _w, name: string | undefined) => (name !== undefined ? String(args[name] ?? "") : result));
  };
  return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, one(v)]));
}
