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
