/**
 * A workflow's signature without the TypeScript package (an optional dependency): sucrase strips
 * the types (keeping line numbers and comments), acorn parses what is left to find `run`, its
 * JSDoc and its first parameter's names and defaults, and the types are read back from the source
 * text as written: the parameter's annotation, and the members of an inline type literal or of an
 * interface or type alias declared in the file (with `extends`, `&`, Partial/Readonly/Required).
 * Anything it cannot read this way is `unknown`, as with the TypeScript reader for types from
 * elsewhere. Syntax errors are sucrase's or acorn's ("Unexpected token (3:12)").
 */
import { parse, type AnyNode, type Comment, type Expression, type Function as FunctionNode, type Pattern, type Program, type Statement } from "acorn";
import { transform } from "sucrase";
import type { JsonValue, WorkflowParam } from "../storage/protocol.js";
import { parseJsDoc, type JsDocBlock, type JsDocTag } from "./jsdoc.js";
import { findParamTag, finite, identifierParams, jsDocDefault, setDefault, withDescription, type MemberInfo } from "./signature-parts.js";
import type { WorkflowSignature, WorkflowSyntaxError } from "./signature.js";

interface RunSite {
  fn: FunctionNode;
  statement: Statement | AnyNode;
}

const MAX_TYPE_DEPTH = 8;

export function extractSignatureLight(source: string, fileName = "workflow.ts"): WorkflowSignature {
  const none: WorkflowSignature = { description: null, params: [], closedParams: false, hasRun: false, syntaxError: null };
  const typed = !/\.[cm]?jsx?$/.test(fileName);
  const jsx = /x$/.test(fileName);
  let js: string;
  try {
    const transforms: Array<"typescript" | "jsx"> = [...(typed ? (["typescript"] as const) : []), ...(jsx ? (["jsx"] as const) : [])];
    js = transforms.length ? transform(source, { transforms, disableESTransforms: true, keepUnusedImports: true }).code : source;
  } catch (err) {
    // Sucrase counts columns from 1 already.
    return { ...none, syntaxError: errorAt(err, 0) };
  }
  const comments: Comment[] = [];
  let program: Program;
  try {
    program = parse(js, { ecmaVersion: "latest", sourceType: "module", locations: true, allowHashBang: true, onComment: comments });
  } catch (err) {
    return { ...none, syntaxError: errorAt(err, 1) };
  }
  return new LightExtractor(source, js, program, comments).signature();
}

function errorAt(err: unknown, columnBase: number): WorkflowSyntaxError {
  const e = err as { message?: unknown; loc?: { line?: unknown; column?: unknown } };
  // "Unexpected token (3:13)": the position is in the fields.
  const message = (typeof e.message === "string" ? e.message : String(err)).replace(/\s*\(\d+:\d+\)$/, "");
  const line = typeof e.loc?.line === "number" ? e.loc.line : 1;
  const column = typeof e.loc?.column === "number" ? e.loc.column + columnBase : 1;
  return { message, line, column };
}

/** `text` with comments (and, when `strings`, string and template contents) blanked to spaces, offsets unchanged. */
function blank(text: string, strings: boolean): string {
  const out = text.split("");
  for (let i = 0; i < text.length; ) {
    const c = text[i]!;
    const next = text[i + 1];
    let end = -1;
    if (c === "/" && next === "/") end = text.indexOf("\n", i) < 0 ? text.length : text.indexOf("\n", i);
    else if (c === "/" && next === "*") end = text.indexOf("*/", i + 2) < 0 ? text.length : text.indexOf("*/", i + 2) + 2;
    else if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < text.length && text[j] !== c && !(c !== "`" && text[j] === "\n")) j += text[j] === "\\" ? 2 : 1;
      if (strings) for (let k = i + 1; k < Math.min(j, text.length); k++) out[k] = text[k] === "\n" ? "\n" : " ";
      i = j + 1;
      continue;
    }
    if (end < 0) {
      i++;
      continue;
    }
    for (let k = i; k < end; k++) out[k] = " ";
    i = end;
  }
  return out.join("");
}

const OPEN = "([{<";
const CLOSE = ")]}>";

/** Index of the first of `stops` at bracket depth 0 from `from` in masked text (`=>` is not a bracket, nor `=` a stop when part of it). */
function topLevel(masked: string, from: number, to: number, stops: string): number {
  let depth = 0;
  for (let i = from; i < to; i++) {
    const c = masked[i]!;
    if (c === "=" && masked[i + 1] === ">") {
      i++;
      continue;
    }
    if (depth === 0 && stops.includes(c)) return i;
    if (OPEN.includes(c)) depth++;
    else if (CLOSE.includes(c)) {
      if (depth === 0) return i;
      depth--;
    }
  }
  return to;
}

class LightExtractor {
  /** Source without comments (types are read from it); and without string contents too (structure is scanned on it). */
  private readonly noComments: string;
  private readonly masked: string;

  constructor(
    private readonly source: string,
    private readonly js: string,
    private readonly program: Program,
    private readonly comments: Comment[],
  ) {
    this.noComments = blank(source, false);
    this.masked = blank(source, true);
  }

  signature(): WorkflowSignature {
    const run = this.findRun();
    const runDoc = run ? this.docBefore(run.statement.start) : null;
    const description = this.headerDescription(run) ?? (runDoc?.description || null);
    const first = run?.fn.params[0];
    const type = first ? this.paramType(first) : null;
    const members = type === null ? null : this.membersOf(type, 0);
    const params = run ? this.params(first, members, runDoc?.tags ?? []) : [];
    return { description, params, closedParams: run !== null && closed(first, members), hasRun: run !== null, syntaxError: null };
  }

  private findRun(): RunSite | null {
    const locals = new Map<string, RunSite>();
    let exported: RunSite | null = null;
    let alias: string | null = null;
    for (const raw of this.program.body) {
      const st = raw as AnyNode;
      const decl = st.type === "ExportNamedDeclaration" ? st.declaration : st;
      const isExport = st.type === "ExportNamedDeclaration";
      if (decl?.type === "FunctionDeclaration" && decl.id) {
        if (!locals.has(decl.id.name)) locals.set(decl.id.name, { fn: decl, statement: st });
        if (decl.id.name === "run" && isExport && !exported) exported = { fn: decl, statement: st };
      } else if (decl?.type === "VariableDeclaration") {
        for (const d of decl.declarations) {
          const init = d.init;
          if (d.id.type !== "Identifier" || !init || (init.type !== "ArrowFunctionExpression" && init.type !== "FunctionExpression")) continue;
          locals.set(d.id.name, { fn: init, statement: st });
          if (d.id.name === "run" && isExport) exported = { fn: init, statement: st };
        }
      }
      if (st.type === "ExportNamedDeclaration" && !st.declaration && !st.source) {
        for (const sp of st.specifiers) {
          const exportedName = sp.exported.type === "Identifier" ? sp.exported.name : String(sp.exported.value);
          if (exportedName === "run" && sp.local.type === "Identifier") alias = sp.local.name;
        }
      }
    }
    if (!exported && alias !== null) exported = locals.get(alias) ?? null;
    return exported;
  }

  private jsDocs(from: number, to: number): Array<{ doc: JsDocBlock; end: number }> {
    return this.comments.filter((c) => c.type === "Block" && c.value.startsWith("*") && c.value !== "*" && c.start >= from && c.end <= to).map((c) => ({ doc: parseJsDoc(`/*${c.value}*/`), end: c.end }));
  }

  /** The JSDoc block closest before `start`, after the statement before it. */
  private docBefore(start: number): JsDocBlock | null {
    const prev = this.program.body.filter((s) => s.end <= start).at(-1);
    return this.jsDocs(prev ? prev.end : 0, start).at(-1)?.doc ?? null;
  }

  private headerDescription(run: RunSite | null): string | null {
    const first = this.program.body[0];
    const blocks = this.jsDocs(0, first ? first.start : this.js.length);
    const header = blocks[0];
    if (!header) return null;
    const declaration = first !== undefined && ["FunctionDeclaration", "ClassDeclaration", "VariableDeclaration", "ExportNamedDeclaration"].includes(first.type);
    const attachedToHelper = first !== undefined && blocks.length === 1 && first !== run?.statement && declaration && !/\n[ \t]*\r?\n/.test(this.js.slice(header.end, first.start));
    return attachedToHelper ? null : header.doc.description || null;
  }

  // ---- parameters --------------------------------------------------------------------------

  private params(first: Pattern | undefined, members: Map<string, MemberInfo> | null, tags: readonly JsDocTag[]): WorkflowParam[] {
    if (!first) return [];
    const paramTags = tags.filter((t) => t.tag === "param");
    const target = first.type === "AssignmentPattern" ? first.left : first;
    if (target.type === "ObjectPattern") return this.fromBinding(target.properties, members, paramTags);
    if (target.type !== "Identifier") return [];
    return identifierParams(target.name, members, paramTags);
  }

  private fromBinding(properties: ReadonlyArray<AnyNode>, members: Map<string, MemberInfo> | null, tags: readonly JsDocTag[]): WorkflowParam[] {
    const out: WorkflowParam[] = [];
    let hasRest = false;
    for (const prop of properties) {
      if (prop.type === "RestElement") {
        hasRest = true;
        continue;
      }
      if (prop.type !== "Property") continue;
      const key = propertyKey(prop.key, prop.computed);
      if (key === null) continue;
      const member = members?.get(key);
      const tag = findParamTag(tags, key);
      const init = prop.value.type === "AssignmentPattern" ? prop.value.right : null;
      const type = member?.type ?? (init ? literalType(init) : null) ?? tag?.type ?? "unknown";
      const required = !init && !member?.optional && !(member === undefined && tag?.optional);
      const p: WorkflowParam = { name: key, type, required };
      if (init) setDefault(p, literalValue(init) ?? { expression: this.js.slice(init.start, init.end).replace(/\s+/g, " ").trim() });
      else if (!member && tag?.default !== undefined) setDefault(p, jsDocDefault(tag.default));
      out.push(withDescription(p, member?.description ?? tag?.text));
    }
    if (hasRest && members) {
      const seen = new Set(out.map((p) => p.name));
      for (const [name, m] of members) if (!seen.has(name)) out.push(withDescription({ name, type: m.type, required: !m.optional }, m.description ?? findParamTag(tags, name)?.text));
    }
    return out;
  }

  // ---- types, from the source text ---------------------------------------------------------

  /**
   * The first parameter's type annotation as written, or null. Sucrase keeps line numbers, so the
   * parameter is found on its line of the source: the same occurrence of its first token.
   */
  private paramType(first: Pattern): { start: number; end: number } | null {
    const target = first.type === "AssignmentPattern" ? first.left : first;
    if (!target.loc || (target.type !== "ObjectPattern" && target.type !== "Identifier")) return null;
    const token = target.type === "ObjectPattern" ? "{" : target.name;
    const lineStart = (text: string, line: number) => {
      let at = 0;
      for (let l = 1; l < line; l++) at = text.indexOf("\n", at) + 1;
      return at;
    };
    const jsLine = lineStart(this.js, target.loc.start.line);
    const nth = occurrences(blank(this.js.slice(jsLine, jsLine + target.loc.start.column), true), token);
    const srcLine = lineStart(this.source, target.loc.start.line);
    const lineEnd = this.masked.indexOf("\n", srcLine) < 0 ? this.masked.length : this.masked.indexOf("\n", srcLine);
    let at = -1;
    for (let i = 0, from = srcLine; i <= nth; i++) {
      at = findToken(this.masked, token, from, lineEnd);
      if (at < 0) return null;
      from = at + token.length;
    }
    // Past the binding: a balanced `{...}` or the name, then `?`, then `: Type`.
    let i = token === "{" ? topLevel(this.masked, at + 1, this.masked.length, "") + 1 : at + token.length;
    while (/\s/.test(this.masked[i] ?? "")) i++;
    if (this.masked[i] === "?") i++;
    while (/\s/.test(this.masked[i] ?? "")) i++;
    if (this.masked[i] !== ":") return null;
    const end = topLevel(this.masked, i + 1, this.masked.length, ",=");
    return { start: i + 1, end };
  }

  private typeText(span: { start: number; end: number }): string {
    return this.noComments.slice(span.start, span.end).replace(/\s+/g, " ").trim();
  }

  private membersOf(span: { start: number; end: number }, depth: number): Map<string, MemberInfo> | null {
    if (depth > MAX_TYPE_DEPTH) return null;
    let { start, end } = span;
    while (start < end && /\s/.test(this.masked[start]!)) start++;
    while (end > start && /\s/.test(this.masked[end - 1]!)) end--;
    if (start >= end) return null;
    const amp = topLevel(this.masked, start, end, "&");
    if (amp < end) {
      const parts: Array<Map<string, MemberInfo>> = [];
      for (let from = start; from < end; ) {
        const to = topLevel(this.masked, from, end, "&");
        const m = this.membersOf({ start: from, end: to }, depth + 1);
        if (m) parts.push(m);
        from = to + 1;
      }
      return parts.length ? new Map(parts.flatMap((m) => [...m])) : null;
    }
    const first = this.masked[start];
    if ((first === "(" || first === "{") && topLevel(this.masked, start + 1, end, "") === end - 1) {
      return first === "(" ? this.membersOf({ start: start + 1, end: end - 1 }, depth + 1) : this.literalMembers(start + 1, end - 1);
    }
    const ref = /^([A-Za-z_$][\w$]*)\s*(?:<([\s\S]*)>)?$/.exec(this.masked.slice(start, end));
    if (!ref) return null;
    const [, name, arg] = ref;
    if (arg !== undefined && (name === "Readonly" || name === "Partial" || name === "Required")) {
      const argStart = this.masked.indexOf("<", start) + 1;
      const inner = this.membersOf({ start: argStart, end: end - 1 }, depth + 1);
      if (!inner || name === "Readonly") return inner;
      return new Map([...inner].map(([k, m]) => [k, { ...m, optional: name === "Partial" }]));
    }
    return this.namedTypeMembers(name!, depth);
  }

  /** Members of a top-level interface (merged declarations, with `extends`) or type alias of the file. */
  private namedTypeMembers(name: string, depth: number): Map<string, MemberInfo> | null {
    const found = new Map<string, MemberInfo>();
    let known = false;
    const re = new RegExp(`(?:^|[^\\w$.])(interface|type)\\s+${name}\\b`, "g");
    for (const m of this.masked.matchAll(re)) {
      let i = m.index + m[0].length;
      if (m[1] === "type") {
        const eq = topLevel(this.masked, i, this.masked.length, "=;");
        if (this.masked[eq] !== "=") continue;
        const end = topLevel(this.masked, eq + 1, this.masked.length, ";\n");
        return this.membersOf({ start: eq + 1, end }, depth + 1);
      }
      const brace = this.masked.indexOf("{", i);
      if (brace < 0) continue;
      known = true;
      const heritage = /\bextends\s+([\s\S]*)$/.exec(this.masked.slice(i, brace));
      for (const base of heritage ? heritage[1]!.split(",").map((b) => b.trim()).filter((b) => /^[A-Za-z_$][\w$]*$/.test(b)) : []) {
        for (const [k, v] of this.namedTypeMembers(base, depth + 1) ?? []) found.set(k, v);
      }
      i = brace + 1;
      const close = topLevel(this.masked, i, this.masked.length, "");
      for (const [k, v] of this.literalMembers(i, close)) found.set(k, v);
    }
    return known ? found : null;
  }

  /** Property members between the braces of a type literal or interface body. */
  private literalMembers(start: number, end: number): Map<string, MemberInfo> {
    const out = new Map<string, MemberInfo>();
    for (let from = start; from < end; ) {
      const to = topLevel(this.masked, from, end, ";,\n");
      const m = /^\s*(?:readonly\s+)?([A-Za-z_$#][\w$]*|"[^"]*"|'[^']*')\s*(\?)?\s*:/.exec(this.noComments.slice(from, to));
      if (m) {
        const key = /^["']/.test(m[1]!) ? m[1]!.slice(1, -1) : m[1]!;
        const typeSpan = { start: from + m[0].length, end: to };
        const type = this.typeText(typeSpan);
        const info: MemberInfo = { type: type || "unknown", optional: m[2] === "?" || includesUndefined(type) };
        const doc = this.memberDoc(from + m.index + m[0].indexOf(m[1]!));
        if (doc) info.description = doc;
        out.set(key, info);
      }
      from = to + 1;
    }
    return out;
  }

  /** The description of the JSDoc block right before a member's name (only whitespace between). */
  private memberDoc(nameAt: number): string | undefined {
    const before = this.source.slice(0, nameAt);
    const m = /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*(?:readonly\s+)?$/.exec(before);
    return m ? parseJsDoc(`/**${m[1]}*/`).description || undefined : undefined;
  }
}

function occurrences(text: string, token: string): number {
  let n = 0;
  for (let at = findToken(text, token, 0, text.length); at >= 0; at = findToken(text, token, at + token.length, text.length)) n++;
  return n;
}

/** `token` in `text` between `from` and `to`; a name only as a whole word. */
function findToken(text: string, token: string, from: number, to: number): number {
  for (let at = text.indexOf(token, from); at >= 0 && at < to; at = text.indexOf(token, at + 1)) {
    if (token === "{" || (!/[\w$]/.test(text[at - 1] ?? "") && !/[\w$]/.test(text[at + token.length] ?? ""))) return at;
  }
  return -1;
}

function includesUndefined(type: string): boolean {
  const t = type.replace(/^\((.*)\)$/, "$1");
  return t.split("|").some((u) => u.trim() === "undefined");
}

function closed(first: Pattern | undefined, members: Map<string, MemberInfo> | null): boolean {
  if (!first) return true;
  if (first.type === "RestElement") return false;
  const target = first.type === "AssignmentPattern" ? first.left : first;
  if (target.type === "ObjectPattern") {
    const rest = target.properties.some((p) => p.type === "RestElement");
    const computed = target.properties.some((p) => p.type === "Property" && propertyKey(p.key, p.computed) === null);
    return !computed && (!rest || members !== null);
  }
  return target.type === "Identifier" && members !== null;
}

function propertyKey(key: Expression | AnyNode, computed: boolean): string | null {
  if (key.type === "Identifier" && !computed) return key.name;
  if (key.type === "Literal" && (typeof key.value === "string" || typeof key.value === "number")) return String(key.value);
  return null;
}

function literalValue(expr: Expression | AnyNode): { value: JsonValue } | undefined {
  switch (expr.type) {
    case "Literal":
      if (typeof expr.value === "string" || typeof expr.value === "boolean" || expr.value === null) return "regex" in expr && expr.regex ? undefined : { value: expr.value };
      return typeof expr.value === "number" ? finite(expr.value) : undefined;
    case "TemplateLiteral":
      return expr.expressions.length === 0 ? { value: expr.quasis[0]?.value.cooked ?? "" } : undefined;
    case "UnaryExpression":
      if ((expr.operator === "-" || expr.operator === "+") && expr.argument.type === "Literal" && typeof expr.argument.value === "number") return finite(expr.operator === "-" ? -expr.argument.value : expr.argument.value);
      return undefined;
    case "ArrayExpression": {
      const items: JsonValue[] = [];
      for (const el of expr.elements) {
        const v = el && el.type !== "SpreadElement" ? literalValue(el) : undefined;
        if (!v) return undefined;
        items.push(v.value);
      }
      return { value: items };
    }
    case "ObjectExpression": {
      const obj: { [key: string]: JsonValue } = {};
      for (const prop of expr.properties) {
        if (prop.type !== "Property" || prop.kind !== "init" || prop.method || prop.shorthand) return undefined;
        const key = propertyKey(prop.key, prop.computed);
        const v = literalValue(prop.value);
        if (key === null || !v || key === "__proto__") return undefined;
        obj[key] = v.value;
      }
      return { value: obj };
    }
    default:
      return undefined;
  }
}

function literalType(expr: Expression | AnyNode): string | null {
  if (expr.type === "Literal") {
    if (typeof expr.value === "string") return "string";
    if (typeof expr.value === "number") return "number";
    if (typeof expr.value === "boolean") return "boolean";
    if (typeof expr.value === "bigint") return "bigint";
    return null;
  }
  if (expr.type === "TemplateLiteral") return "string";
  if (expr.type === "UnaryExpression" && expr.argument.type === "Literal" && typeof expr.argument.value === "number") return "number";
  return null;
}
