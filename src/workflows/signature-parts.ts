/**
 * Small pieces both workflow signature readers share (signature.ts with the TypeScript parser,
 * signature-light.ts without it): JSDoc `@param` lookup, defaults and descriptions.
 */
import type { JsonValue, WorkflowParam } from "../storage/protocol.js";
import type { JsDocTag } from "./jsdoc.js";

/** `@param host`, `@param args.host` or `@param {string} [opts.host]` for property `key`. */
export function findParamTag(tags: readonly JsDocTag[], key: string): JsDocTag | undefined {
  return tags.find((tag) => {
    if (!tag.name) return false;
    const parts = tag.name.split(".");
    return parts.length <= 2 && parts.at(-1) === key;
  });
}

export function finite(n: number): { value: JsonValue } | undefined {
  return Number.isFinite(n) ? { value: n } : undefined;
}

export function setDefault(p: WorkflowParam, d: { value: JsonValue } | { expression: string }): void {
  if ("value" in d) p.default = d.value;
  else p.defaultExpression = d.expression;
}

/** `@param [retries=3]`: JSDoc writes defaults as source text; a JSON literal is a value, anything else an expression. */
export function jsDocDefault(text: string): { value: JsonValue } | { expression: string } {
  try {
    return { value: JSON.parse(text) as JsonValue };
  } catch {
    // 'single-quoted' strings are common in JSDoc.
    const quoted = /^'([^'\\]*)'$/.exec(text);
    return quoted ? { value: quoted[1]! } : { expression: text };
  }
}

export function withDescription(p: WorkflowParam, description: string | undefined): WorkflowParam {
  if (description) p.description = description;
  return p;
}

/** What a parameter's declared type says of one member: its type text, optionality and doc. */
export interface MemberInfo {
  type: string;
  optional: boolean;
  description?: string;
}

/**
 * The parameters of `run(args)` taking one identifier: the members of its declared type, or for
 * untyped JavaScript the `@param {string} args.host - ...` tags, the only record there is.
 */
export function identifierParams(name: string, members: Map<string, MemberInfo> | null, paramTags: readonly JsDocTag[]): WorkflowParam[] {
  if (members) return [...members].map(([member, m]) => withDescription({ name: member, type: m.type, required: !m.optional }, m.description ?? findParamTag(paramTags, member)?.text));
  const prefix = `${name}.`;
  return paramTags
    .filter((tag) => tag.name?.startsWith(prefix) && !tag.name.slice(prefix.length).includes("."))
    .map((tag) => {
      const p: WorkflowParam = { name: tag.name!.slice(prefix.length), type: tag.type ?? "unknown", required: !tag.optional };
      if (tag.default !== undefined) setDefault(p, jsDocDefault(tag.default));
      return withDescription(p, tag.text);
    });
}
