/**
 * Discovery text generated from `ToolInfo`, the same for every adapter (cli, mcp, http):
 *   - `callableSignature`: one line for `tools.list()` / `tools.search()`,
 *     e.g. `get(args: { url: string; silent?: boolean }): Promise<string>`;
 *   - `describeTool`: a TypeScript declaration (with JSDoc) that compiles on its own.
 *
 * Declaration shape (chosen so every callable name works, even `delete` or `get-weather`):
 *
 *   declare namespace tools {
 *     namespace curl { interface GetArgs { ... } interface Args { ... } }   // types only
 *     const curl: {
 *       (args: curl.Args): Promise<string>;          // escape hatch tools.curl(args)
 *       get(args: curl.GetArgs): Promise<string>;     // recipe tools.curl.get(args)
 *     };
 *   }
 *
 * A type-only namespace merges with the const of the same name, and several tools' declarations
 * concatenate into one `tools` namespace.
 */
import type { JsonValue } from "../storage/protocol.js";
import type { CallableInfo, ParamSpec, ParamType, ToolInfo } from "./protocol.js";

const PLAIN_KEY_RE = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function keyText(name: string): string {
  return PLAIN_KEY_RE.test(name) ? name : JSON.stringify(name);
}

/** Method name in a type literal: `new(...)` there would be a construct signature, so quote it. */
function memberKeyText(name: string): string {
  return name === "new" ? JSON.stringify(name) : keyText(name);
}

function literalText(v: JsonValue): string {
  // JSON text of a string, number, boolean, null, array or object is also a valid TS literal type.
  return JSON.stringify(v);
}

function scalarTypeText(type: ParamType): string {
  switch (type) {
    case "integer":
      return "number";
    case "array":
      return "unknown[]";
    case "object":
      return "Record<string, unknown>";
    default:
      return type;
  }
}

/** TypeScript type text of one parameter (enums become literal unions, arrays `T[]`). */
export function paramTypeText(p: Pick<ParamSpec, "type" | "items" | "enum" | "properties">): string {
  if (p.enum && p.enum.length > 0) return p.enum.map(literalText).join(" | ");
  if (p.type === "array") {
    const item = p.items ? scalarTypeText(p.items) : "unknown";
    return /[ |]/.test(item) ? `Array<${item}>` : `${item}[]`;
  }
  if (p.type === "object" && p.properties && p.properties.length > 0) return inlineObjectText(p.properties);
  return scalarTypeText(p.type);
}

function inlineObjectText(params: readonly ParamSpec[]): string {
  if (params.length === 0) return "{}";
  return `{ ${params.map((p) => `${keyText(p.name)}${p.required ? "" : "?"}: ${paramTypeText(p)}`).join("; ")} }`;
}

/** `name(args: { ... }): Promise<T>` on one line; `args?` when nothing is required; `name()` when it takes nothing. */
export function callableSignature(name: string, c: CallableInfo): string {
  const ret = `Promise<${c.returns || "unknown"}>`;
  if (c.params.length === 0) return `${name}(): ${ret}`;
  const optional = c.params.every((p) => !p.required) ? "?" : "";
  return `${name}(args${optional}: ${inlineObjectText(c.params)}): ${ret}`;
}

/** A JSDoc block (or nothing) indented by `indent`; `*\/` inside text is escaped. */
export function jsDoc(lines: readonly string[], indent: string): string[] {
  const clean = lines
    .flatMap((l) => l.split(/\r?\n/))
    .map((l) => l.replace(/\*\//g, "*\\/").trimEnd());
  while (clean.length && clean[clean.length - 1] === "") clean.pop();
  while (clean.length && clean[0] === "") clean.shift();
  if (clean.length === 0) return [];
  if (clean.length === 1) return [`${indent}/** ${clean[0]} */`];
  return [`${indent}/**`, ...clean.map((l) => (l ? `${indent} * ${l}` : `${indent} *`)), `${indent} */`];
}

function paramDoc(p: ParamSpec): string[] {
  const lines: string[] = [];
  if (p.description) lines.push(p.description);
  if (p.default !== undefined) lines.push(`@default ${JSON.stringify(p.default)}`);
  return lines;
}

function interfaceLines(name: string, doc: string[], params: readonly ParamSpec[], indent: string): string[] {
  const out = [...jsDoc(doc, indent), `${indent}interface ${name} {`];
  for (const p of params) {
    out.push(...jsDoc(paramDoc(p), `${indent}  `));
    out.push(`${indent}  ${keyText(p.name)}${p.required ? "" : "?"}: ${paramTypeText(p)};`);
  }
  out.push(`${indent}}`);
  return out;
}

function pascal(name: string): string {
  const words = name.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const joined = words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
  if (!joined) return "Call";
  return /^[0-9]/.test(joined) ? `T${joined}` : joined;
}

/**
 * TypeScript declaration text for one tool. `info.name` must be an identifier that is not a
 * reserved word (the registry guarantees it for every tool it holds).
 */
export function describeTool(info: ToolInfo): string {
  const ns = info.name;
  const used = new Set<string>();
  const unique = (base: string): string => {
    let n = base;
    for (let i = 2; used.has(n); i++) n = `${base}${i}`;
    used.add(n);
    return n;
  };

  const interfaces: string[] = [];
  const members: string[] = [];
  const member = (c: CallableInfo, interfaceBase: string, headerDoc: string[], prefix: string): void => {
    const ret = `Promise<${c.returns || "unknown"}>`;
    members.push(...jsDoc(headerDoc, "    "));
    if (c.params.length === 0) {
      members.push(`    ${prefix}(): ${ret};`);
      return;
    }
    const iface = unique(interfaceBase);
    const access = PLAIN_KEY_RE.test(c.name) ? `.${c.name}` : `[${JSON.stringify(c.name)}]`;
    const label = prefix ? `tools.${ns}${access}(args)` : `tools.${ns}(args)`;
    interfaces.push(...interfaceLines(iface, [`Arguments of ${label}.`], c.params, "    "));
    const optional = c.params.every((p) => !p.required) ? "?" : "";
    members.push(`    ${prefix}(args${optional}: ${ns}.${iface}): ${ret};`);
  };

  // The escape hatch goes first so it gets the plain name `Args`; recipe interfaces end in `<Name>Args`.
  if (info.direct) {
    member(info.direct, "Args", [info.direct.description || `Call ${ns} directly with any of its parameters.`], "");
  }
  for (const c of info.callables) member(c, `${pascal(c.name)}Args`, [c.description], memberKeyText(c.name));

  const toolDoc = [info.description || `The ${ns} tool.`];
  if (info.tags.length) toolDoc.push("", `Tags: ${info.tags.join(", ")}`);

  const out = ["declare namespace tools {"];
  if (interfaces.length) {
    out.push(`  /** Argument types of tools.${ns}. */`, `  namespace ${ns} {`, ...interfaces, "  }");
  }
  out.push(...jsDoc(toolDoc, "  "), `  const ${ns}: {`, ...members, "  };", "}");
  return `${out.join("\n")}\n`;
}

/**
 * A short declaration of a tool with very many callables (an OpenAPI spec's operations): each
 * callable with its one-line description and a loose argument type, no argument interfaces.
 * `note` (how to get one callable's full declaration) is added to the tool's JSDoc.
 */
export function describeToolSummary(info: ToolInfo, note: string): string {
  const ns = info.name;
  const out = ["declare namespace tools {", ...jsDoc([info.description || `The ${ns} tool.`, "", note], "  "), `  const ${ns}: {`];
  for (const c of info.callables) {
    out.push(...jsDoc([c.description], "    "), `    ${memberKeyText(c.name)}(args?: Record<string, unknown>): Promise<unknown>;`);
  }
  out.push("  };", "}");
  return `${out.join("\n")}\n`;
}

/** Declarations of several tools, concatenated (they merge into one `tools` namespace). */
export function describeTools(infos: readonly ToolInfo[]): string {
  return infos.map(describeTool).join("\n");
}
