/**
 * The schemas a code-defined tool may describe its input and output with, read one way: zod 4,
 * any Standard Schema (`~standard`: valibot, arktype, zod 3.24+, effect...), an AI SDK `Schema`
 * (`jsonSchema(...)`, `zodSchema(...)`), or a plain JSON Schema object. Each becomes
 *   - a JSON Schema (discovery: ParamSpecs, `tools.describe` in TypeScript and Python, search), and
 *   - a validator (the exact check, with the schema's own defaults and transforms), when the
 *     schema has one; a plain JSON Schema is checked through its ParamSpecs by the registry.
 * The JSON Schema is computed on first use (at discovery or the first call), not at definition.
 */
import { z } from "zod";

/** The Standard Schema v1 interface (https://standardschema.dev), as far as we use it. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    /** The Standard JSON Schema extension, when the library has it. */
    readonly jsonSchema?: { readonly input: (options: { target: string }) => Record<string, unknown> } | undefined;
  };
}

type StandardResult<Output> = { readonly value: Output; readonly issues?: undefined } | { readonly issues: ReadonlyArray<StandardIssue> };

interface StandardIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** What the AI SDK's `jsonSchema()` / `zodSchema()` return (checked by shape, `ai` is not imported). */
export interface AiSdkSchema<T = unknown> {
  readonly jsonSchema: unknown;
  readonly validate?: ((value: unknown) => { success: true; value: T } | { success: false; error: Error } | PromiseLike<{ success: true; value: T } | { success: false; error: Error }>) | undefined;
  readonly _type?: T;
}

/** A JSON Schema object (draft 7 / 2020-12), e.g. `{ type: "object", properties: {...}, required: [...] }`. */
export type JsonSchemaObject = { readonly [key: string]: unknown };

/** Any schema a code tool accepts for `input` or `output`. */
export type ToolSchema = StandardSchemaV1 | AiSdkSchema | JsonSchemaObject;

/** The value a schema describes (after its transforms): what `execute` receives / returns. */
export type InferSchema<S> = S extends StandardSchemaV1<unknown, infer O> ? O : S extends AiSdkSchema<infer T> ? (unknown extends T ? Record<string, unknown> : T) : Record<string, unknown>;

/** A schema read once into the two things the registry needs. */
export interface NormalizedSchema {
  /** JSON Schema of the value (computed on first read); undefined when the library gives none. */
  jsonSchema(): Record<string, unknown> | undefined;
  /**
   * The schema's own check; undefined for a plain JSON Schema. Gives the (transformed) value or the
   * problems: at once when the library checks synchronously (zod without async refinements), else
   * as a promise. A promise per check was two per code tool call, each call.
   */
  validate: ((value: unknown) => Validation | Promise<Validation>) | undefined;
}

export type Validation = { ok: true; value: unknown } | { ok: false; problems: string[] };

export function isPromiseLike<T>(v: T | PromiseLike<T>): v is PromiseLike<T> {
  return typeof (v as { then?: unknown } | null)?.then === "function";
}

/** `f(value)` when `value` is at hand, else once it resolves. */
export function thenOrNow<T, R>(value: T | PromiseLike<T>, f: (v: T) => R): R | Promise<R> {
  return isPromiseLike(value) ? Promise.resolve(value).then(f) : f(value);
}

const AI_SDK_SCHEMA = Symbol.for("vercel.ai.schema");

function isObject(v: unknown): v is Record<PropertyKey, unknown> {
  return typeof v === "object" && v !== null;
}

export function isStandardSchema(v: unknown): v is StandardSchemaV1 {
  if (!isObject(v) && typeof v !== "function") return false;
  const std = (v as { "~standard"?: unknown })["~standard"];
  return isObject(std) && typeof std["validate"] === "function";
}

function isAiSdkSchema(v: unknown): v is AiSdkSchema {
  return isObject(v) && (v as Record<PropertyKey, unknown>)[AI_SDK_SCHEMA] === true && "jsonSchema" in v;
}

/** True for what `normalizeSchema` accepts (a cheap shape check, for telling tool objects apart). */
export function isToolSchema(v: unknown): v is ToolSchema {
  return isStandardSchema(v) || isAiSdkSchema(v) || (isObject(v) && !Array.isArray(v));
}

function issueText(issue: StandardIssue): string {
  const path = (issue.path ?? []).map((p) => String(isObject(p) ? (p as { key: PropertyKey }).key : p)).join(".");
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** zod 4 has no Standard JSON Schema yet (4.6); its own converter gives the input side's schema. */
function zodJsonSchema(schema: unknown): Record<string, unknown> {
  const raw = z.toJSONSchema(schema as z.ZodType, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  delete raw["$schema"];
  return raw;
}

function once<T>(compute: () => T): () => T {
  let done = false;
  let value: T;
  return () => {
    if (!done) {
      value = compute();
      done = true;
    }
    return value;
  };
}

/**
 * Read `schema` (zod 4, Standard Schema, AI SDK Schema, JSON Schema). `where` names it in errors
 * ("defineTool weather: input"). Throws TypeError for a value that is none of them.
 */
export function normalizeSchema(schema: unknown, where: string): NormalizedSchema {
  if (isAiSdkSchema(schema)) {
    const check = schema.validate;
    return {
      jsonSchema: once(() => asJsonObject(schema.jsonSchema, where)),
      validate: check
        ? (value) => thenOrNow(check(value), (r): Validation => (r.success ? { ok: true, value: r.value } : { ok: false, problems: [r.error.message] }))
        : undefined,
    };
  }
  if (isStandardSchema(schema)) {
    const std = schema["~standard"];
    return {
      jsonSchema: once(() => {
        if ("_zod" in schema) return zodJsonSchema(schema);
        if (std.jsonSchema) return asJsonObject(std.jsonSchema.input({ target: "draft-07" }), where);
        // A library without JSON Schema output: discovery shows loose types, and its validator checks calls.
        return undefined;
      }),
      validate: (value) => thenOrNow(std.validate(value), (r): Validation => (r.issues ? { ok: false, problems: r.issues.map(issueText) } : { ok: true, value: r.value })),
    };
  }
  if (isObject(schema) && !Array.isArray(schema) && typeof schema !== "function") {
    const json = { ...(schema as Record<string, unknown>) };
    return { jsonSchema: () => json, validate: undefined };
  }
  throw new TypeError(`${where}: expected a zod schema, a Standard Schema, an AI SDK schema (jsonSchema(...)) or a JSON Schema object; got ${schema === null ? "null" : Array.isArray(schema) ? "an array" : typeof schema}`);
}

function asJsonObject(v: unknown, where: string): Record<string, unknown> {
  if (!isObject(v) || Array.isArray(v)) throw new TypeError(`${where}: the schema's JSON Schema is not an object`);
  const out = { ...(v as Record<string, unknown>) };
  delete out["$schema"];
  return out;
}
