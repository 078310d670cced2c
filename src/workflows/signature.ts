/**
 * Reads a workflow module's description and parameters from its source, without running it.
 *
 * Uses the TypeScript parser only (no program, no type checker): a workflow is one file and its
 * parameter types are written in that file, so syntax is all we need and parsing stays a few ms.
 */
import type ts from "typescript";
import type { JsonValue, WorkflowParam } from "../storage/protocol.js";
import { parseJsDoc, type JsDocBlock, type JsDocTag } from "./jsdoc.js";
import { findParamTag, finite, identifierParams, jsDocDefault, setDefault, withDescription, type MemberInfo } from "./signature-parts.js";
import { loadTypeScript } from "./typescript.js";

export interface WorkflowSyntaxError {
  message: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
}

export interface WorkflowSignature {
  /** Leading JSDoc block of the module, or of `run`; null when neither has text. */
  description: string | null;
  /** Parameters read from `run`'s first argument. */
  params: WorkflowParam[];
  /**
   * True when `params` is every name `run` accepts (destructured without a rest element, or typed
   * with members written in the file, or no argument at all), so a call with any other name is a
   * mistake. False for `run(args)` untyped, `{ a, ...rest }` without a known type, and the like.
   */
  closedParams: boolean;
  /** True when the module exports a function named `run`. */
  hasRun: boolean;
  /** The first syntax error, or null. The other fields are best effort when it is set. */
  syntaxError: WorkflowSyntaxError | null;
}

type TS = typeof ts;
type FunctionLike = ts.FunctionDeclaration | ts.ArrowFunction | ts.FunctionExpression;

/**
 * Extracts description, parameters and `run`'s presence from a workflow module's source. Without
 * the optional `typescript` package, a lighter parser reads the same (signature-light.ts): types as
 * written, syntax errors in its own words.
 */
export async function extractSignature(source: string, fileName = "workflow.ts"): Promise<WorkflowSignature> {
  const t = await loadTypeScript();
  // Loaded only then: it imports sucrase and acorn, which a process start must not pay for.
  if (!t) return (await import("./signature-light.js")).extractSignatureLight(source, fileName);
  return new Extractor(t, source, fileName).signature();
}

interface RunSite {
  fn: FunctionLike;
  /** Top-level statement whose leading comments document `run`. */
  statement: ts.Statement;
}

/** Guards against type aliases that refer to each other. */
const MAX_TYPE_DEPTH = 8;

class Extractor {
  private readonly sf: ts.SourceFile;

  constructor(
    private readonly t: TS,
    source: string,
    fileName: string,
  ) {
    this.sf = t.createSourceFile(fileName, source, t.ScriptTarget.Latest, true, scriptKind(t, fileName));
  }

  signature(): WorkflowSignature {
    const run = this.findRun();
    const runDoc = run ? this.docOf(run.statement) : null;
    const description = this.headerDescription(run) ?? (runDoc?.description || null);
    const params = run ? this.params(run.fn, runDoc?.tags ?? []) : [];
    return { description, params, closedParams: run !== null && this.closedParams(run.fn), hasRun: run !== null, syntaxError: this.syntaxError() };
  }

  private syntaxError(): WorkflowSyntaxError | null {
    // parseDiagnostics is internal but stable; it is the only way to get syntax errors without a Program.
    const diags = (this.sf as unknown as { parseDiagnostics?: readonly ts.Diagnostic[] }).parseDiagnostics ?? [];
    const first = [...diags].sort((a, b) => (a.start ?? 0) - (b.start ?? 0))[0];
    if (!first) return null;
    const { line, character } = this.sf.getLineAndCharacterOfPosition(first.start ?? 0);
    return { message: this.t.flattenDiagnosticMessageText(first.messageText, "\n"), line: line + 1, column: character + 1 };
  }

  // ---- finding run -------------------------------------------------------------------------

  /** `export [async] function run`, `export const run = <function>`, or `export { x as run }`. */
  private findRun(): RunSite | null {
    const t = this.t;
    const locals = new Map<string, RunSite>();
    let exported: RunSite | null = null;
    let alias: string | null = null;
    for (const st of this.sf.statements) {
      if (t.isFunctionDeclaration(st) && st.name) {
        const site = { fn: st, statement: st };
        // With overloads keep the first declaration: its JSDoc and parameters are what readers see.
        if (!locals.has(st.name.text)) locals.set(st.name.text, site);
        if (st.name.text === "run" && isNamedExport(t, st) && !exported) exported = site;
      } else if (t.isVariableStatement(st)) {
        for (const decl of st.declarationList.declarations) {
          const fn = decl.initializer ? unwrapFunction(t, decl.initializer) : null;
          if (!fn || !t.isIdentifier(decl.name)) continue;
          const site = { fn, statement: st };
          locals.set(decl.name.text, site);
          if (decl.name.text === "run" && isNamedExport(t, st)) exported = site;
        }
      } else if (t.isExportDeclaration(st) && !st.moduleSpecifier && !st.isTypeOnly && st.exportClause && t.isNamedExports(st.exportClause)) {
        for (const el of st.exportClause.elements) {
          if (!el.isTypeOnly && el.name.text === "run") alias = (el.propertyName ?? el.name).text;
        }
      }
    }
    if (!exported && alias !== null) exported = locals.get(alias) ?? null;
    return exported;
  }

  // ---- description -------------------------------------------------------------------------

  /**
   * The first JSDoc block before the first statement, when it describes the module: it sits on
   * `run` itself, it is followed by a blank line or another JSDoc block, or what follows is not a
   * declaration (an import). A lone block directly on a helper documents that helper, not the workflow.
   */
  private headerDescription(run: RunSite | null): string | null {
    const first = this.sf.statements[0];
    const blocks = this.jsDocComments(first ? first.getFullStart() : 0);
    const header = blocks[0];
    if (!header) return null;
    const attachedToHelper =
      first !== undefined &&
      blocks.length === 1 &&
      first !== run?.statement &&
      isDeclaration(this.t, first) &&
      !/\n[ \t]*\r?\n/.test(this.sf.text.slice(header.end, first.getStart(this.sf)));
    if (attachedToHelper) return null;
    return header.doc.description || null;
  }

  /** The JSDoc block closest to `node` (the last one among its leading comments). */
  private docOf(node: ts.Node): JsDocBlock | null {
    return this.jsDocComments(node.getFullStart()).at(-1)?.doc ?? null;
  }

  private jsDocComments(pos: number): Array<{ doc: JsDocBlock; end: number }> {
    const text = this.sf.text;
    // TypeScript counts a comment on the previous token's line as that token's trailing comment, so
    // `{ /** target host */ host: string }` needs both lists to find the property's JSDoc.
    const ranges = [...(this.t.getTrailingCommentRanges(text, pos) ?? []), ...(this.t.getLeadingCommentRanges(text, pos) ?? [])];
    const seen = new Set<number>();
    return ranges
      .filter((r) => !seen.has(r.pos) && seen.add(r.pos))
      .map((r) => ({ raw: text.slice(r.pos, r.end), end: r.end }))
      .filter((c) => c.raw.startsWith("/**") && c.raw !== "/**/")
      .map((c) => ({ doc: parseJsDoc(c.raw), end: c.end }));
  }

  // ---- parameters --------------------------------------------------------------------------

  private closedParams(fn: FunctionLike): boolean {
    const t = this.t;
    const first = fn.parameters[0];
    if (!first) return true;
    if (first.dotDotDotToken) return false;
    const membersKnown = first.type !== undefined && this.membersOf(first.type, 0) !== null;
    if (t.isObjectBindingPattern(first.name)) {
      const rest = first.name.elements.some((el) => el.dotDotDotToken);
      const computed = first.name.elements.some((el) => !el.dotDotDotToken && this.bindingKey(el) === null);
      return !computed && (!rest || membersKnown);
    }
    return t.isIdentifier(first.name) && membersKnown;
  }

  private params(fn: FunctionLike, tags: readonly JsDocTag[]): WorkflowParam[] {
    const t = this.t;
    const first = fn.parameters[0];
    if (!first) return [];
    const paramTags = tags.filter((tag) => tag.tag === "param");
    const members = first.type ? this.membersOf(first.type, 0) : null;

    if (t.isObjectBindingPattern(first.name)) return this.fromBinding(first.name, members, paramTags);
    if (!t.isIdentifier(first.name)) return [];
    return identifierParams(first.name.text, members, paramTags);
  }

  private fromBinding(pattern: ts.ObjectBindingPattern, members: Map<string, MemberInfo> | null, tags: readonly JsDocTag[]): WorkflowParam[] {
    const out: WorkflowParam[] = [];
    let hasRest = false;
    for (const el of pattern.elements) {
      if (el.dotDotDotToken) {
        hasRest = true;
        continue;
      }
      const key = this.bindingKey(el);
      if (key === null) continue;
      const member = members?.get(key);
      const tag = findParamTag(tags, key);
      const init = el.initializer;
      const type = member?.type ?? (init ? this.literalType(init) : null) ?? tag?.type ?? "unknown";
      const required = !init && !member?.optional && !(member === undefined && tag?.optional);
      const p: WorkflowParam = { name: key, type, required };
      if (init) setDefault(p, this.literalValue(init) ?? { expression: this.text(init) });
      else if (!member && tag?.default !== undefined) setDefault(p, jsDocDefault(tag.default));
      out.push(withDescription(p, member?.description ?? tag?.text));
    }
    // `{ host, ...rest }: Args` accepts every member of Args, so list the ones not bound by name.
    if (hasRest && members) {
      const seen = new Set(out.map((p) => p.name));
      for (const [name, m] of members) {
        if (!seen.has(name)) out.push(withDescription({ name, type: m.type, required: !m.optional }, m.description ?? findParamTag(tags, name)?.text));
      }
    }
    return out;
  }

  /** The property a binding element reads: `host` in `{ host }` and in `{ host: h }`. */
  private bindingKey(el: ts.BindingElement): string | null {
    const t = this.t;
    if (el.propertyName) return propertyNameText(t, el.propertyName);
    return t.isIdentifier(el.name) ? el.name.text : null;
  }

  /**
   * The value of a default written as a literal — strings, numbers, booleans, null, and arrays and
   * objects of those — wrapped in `{ value }`; undefined for anything computed (`Date.now()`, `MAX`).
   */
  private literalValue(expr: ts.Expression): { value: JsonValue } | undefined {
    const t = this.t;
    if (t.isParenthesizedExpression(expr) || t.isAsExpression(expr) || t.isSatisfiesExpression(expr)) return this.literalValue(expr.expression);
    if (t.isStringLiteral(expr) || t.isNoSubstitutionTemplateLiteral(expr)) return { value: expr.text };
    if (t.isNumericLiteral(expr)) return finite(Number(expr.text.replace(/_/g, "")));
    if (t.isPrefixUnaryExpression(expr) && t.isNumericLiteral(expr.operand) && (expr.operator === t.SyntaxKind.MinusToken || expr.operator === t.SyntaxKind.PlusToken)) {
      const n = Number(expr.operand.text.replace(/_/g, ""));
      return finite(expr.operator === t.SyntaxKind.MinusToken ? -n : n);
    }
    if (expr.kind === t.SyntaxKind.TrueKeyword) return { value: true };
    if (expr.kind === t.SyntaxKind.FalseKeyword) return { value: false };
    if (expr.kind === t.SyntaxKind.NullKeyword) return { value: null };
    if (t.isArrayLiteralExpression(expr)) {
      const items: JsonValue[] = [];
      for (const el of expr.elements) {
        const v = this.literalValue(el);
        if (!v) return undefined;
        items.push(v.value);
      }
      return { value: items };
    }
    if (t.isObjectLiteralExpression(expr)) {
      const obj: { [key: string]: JsonValue } = {};
      for (const prop of expr.properties) {
        if (!t.isPropertyAssignment(prop)) return undefined;
        const key = propertyNameText(t, prop.name);
        const v = this.literalValue(prop.initializer);
        if (key === null || !v || key === "__proto__") return undefined;
        obj[key] = v.value;
      }
      return { value: obj };
    }
    return undefined;
  }

  /** Type of an untyped parameter from its default's literal: string, number, boolean. */
  private literalType(expr: ts.Expression): string | null {
    const t = this.t;
    if (t.isParenthesizedExpression(expr)) return this.literalType(expr.expression);
    if (t.isStringLiteral(expr) || t.isNoSubstitutionTemplateLiteral(expr) || t.isTemplateExpression(expr)) return "string";
    if (t.isNumericLiteral(expr)) return "number";
    if (t.isBigIntLiteral(expr)) return "bigint";
    if (t.isPrefixUnaryExpression(expr) && t.isNumericLiteral(expr.operand)) return "number";
    if (expr.kind === t.SyntaxKind.TrueKeyword || expr.kind === t.SyntaxKind.FalseKeyword) return "boolean";
    if (t.isAsExpression(expr) && !(t.isTypeReferenceNode(expr.type) && expr.type.getText(this.sf) === "const")) return this.text(expr.type);
    return null;
  }

  /** Properties of an object type written in this file, or null when they cannot be known by parsing. */
  private membersOf(type: ts.TypeNode, depth: number): Map<string, MemberInfo> | null {
    const t = this.t;
    if (depth > MAX_TYPE_DEPTH) return null;
    if (t.isParenthesizedTypeNode(type)) return this.membersOf(type.type, depth + 1);
    if (t.isTypeLiteralNode(type)) return this.literalMembers(type.members);
    if (t.isIntersectionTypeNode(type)) {
      const parts = type.types.map((p) => this.membersOf(p, depth + 1)).filter((m): m is Map<string, MemberInfo> => m !== null);
      return parts.length ? new Map(parts.flatMap((m) => [...m])) : null;
    }
    if (t.isTypeReferenceNode(type) && t.isIdentifier(type.typeName)) {
      const name = type.typeName.text;
      const arg = type.typeArguments?.[0];
      if (arg && (name === "Readonly" || name === "Partial" || name === "Required")) {
        const inner = this.membersOf(arg, depth + 1);
        if (!inner || name === "Readonly") return inner;
        return new Map([...inner].map(([k, m]) => [k, { ...m, optional: name === "Partial" }]));
      }
      return this.namedTypeMembers(name, depth);
    }
    return null;
  }

  /** Members of a top-level interface (all merged declarations, with `extends`) or type alias. */
  private namedTypeMembers(name: string, depth: number): Map<string, MemberInfo> | null {
    const t = this.t;
    const found = new Map<string, MemberInfo>();
    let known = false;
    for (const st of this.sf.statements) {
      if (t.isInterfaceDeclaration(st) && st.name.text === name) {
        known = true;
        for (const clause of st.heritageClauses ?? []) {
          for (const base of clause.types) {
            if (!t.isIdentifier(base.expression)) continue;
            for (const [k, m] of this.namedTypeMembers(base.expression.text, depth + 1) ?? []) found.set(k, m);
          }
        }
        for (const [k, m] of this.literalMembers(st.members)) found.set(k, m);
      } else if (t.isTypeAliasDeclaration(st) && st.name.text === name) {
        return this.membersOf(st.type, depth + 1);
      }
    }
    return known ? found : null;
  }

  private literalMembers(members: ts.NodeArray<ts.TypeElement>): Map<string, MemberInfo> {
    const t = this.t;
    const out = new Map<string, MemberInfo>();
    for (const m of members) {
      if (!t.isPropertySignature(m)) continue;
      const key = propertyNameText(t, m.name);
      if (key === null) continue;
      const info: MemberInfo = {
        type: m.type ? this.text(m.type) : "unknown",
        optional: m.questionToken !== undefined || (m.type !== undefined && includesUndefined(t, m.type)),
      };
      const doc = this.docOf(m)?.description;
      if (doc) info.description = doc;
      out.set(key, info);
    }
    return out;
  }

  /** Source text of a node with whitespace runs collapsed to one space and comments removed. */
  private text(node: ts.Node): string {
    const raw = node.getText(this.sf);
    if (!raw.includes("//") && !raw.includes("/*")) return raw.replace(/\s+/g, " ").trim();
    return this.withoutComments(node);
  }

  /** Rebuilds a node's text token by token, so that a `// note` inside a type cannot swallow what follows. */
  private withoutComments(node: ts.Node): string {
    const t = this.t;
    const scanner = t.createScanner(t.ScriptTarget.Latest, false, this.sf.languageVariant, this.sf.text, undefined, node.getStart(this.sf), node.getEnd() - node.getStart(this.sf));
    let out = "";
    let gap = false;
    for (let kind = scanner.scan(); kind !== t.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
      if (
        kind === t.SyntaxKind.WhitespaceTrivia ||
        kind === t.SyntaxKind.NewLineTrivia ||
        kind === t.SyntaxKind.SingleLineCommentTrivia ||
        kind === t.SyntaxKind.MultiLineCommentTrivia
      ) {
        gap = true;
        continue;
      }
      out += (gap && out ? " " : "") + scanner.getTokenText();
      gap = false;
    }
    return out;
  }
}

function scriptKind(t: TS, fileName: string): ts.ScriptKind {
  const ext = /\.[cm]?[jt]sx?$/.exec(fileName)?.[0] ?? ".ts";
  if (ext.endsWith("jsx")) return t.ScriptKind.JSX;
  if (ext.endsWith("tsx")) return t.ScriptKind.TSX;
  if (ext.endsWith("js")) return t.ScriptKind.JS;
  return t.ScriptKind.TS;
}

/** `export` without `default`: the module has a binding named by the declaration. */
function isNamedExport(t: TS, st: ts.Statement): boolean {
  const mods = t.canHaveModifiers(st) ? (t.getModifiers(st) ?? []) : [];
  return mods.some((m) => m.kind === t.SyntaxKind.ExportKeyword) && !mods.some((m) => m.kind === t.SyntaxKind.DefaultKeyword);
}

/** The function behind `(async () => {})`, `async function () {} as X`, and so on. */
function unwrapFunction(t: TS, expr: ts.Expression): FunctionLike | null {
  if (t.isArrowFunction(expr) || t.isFunctionExpression(expr)) return expr;
  if (t.isParenthesizedExpression(expr) || t.isAsExpression(expr) || t.isSatisfiesExpression(expr) || t.isTypeAssertionExpression(expr)) {
    return unwrapFunction(t, expr.expression);
  }
  return null;
}

function isDeclaration(t: TS, st: ts.Statement): boolean {
  return (
    t.isFunctionDeclaration(st) ||
    t.isClassDeclaration(st) ||
    t.isVariableStatement(st) ||
    t.isInterfaceDeclaration(st) ||
    t.isTypeAliasDeclaration(st) ||
    t.isEnumDeclaration(st)
  );
}

function includesUndefined(t: TS, type: ts.TypeNode): boolean {
  if (t.isParenthesizedTypeNode(type)) return includesUndefined(t, type.type);
  if (type.kind === t.SyntaxKind.UndefinedKeyword) return true;
  return t.isUnionTypeNode(type) && type.types.some((u) => includesUndefined(t, u));
}

function propertyNameText(t: TS, name: ts.PropertyName): string | null {
  if (t.isIdentifier(name) || t.isStringLiteral(name) || t.isNumericLiteral(name) || t.isPrivateIdentifier(name)) return name.text;
  if (t.isComputedPropertyName(name) && t.isStringLiteralLike(name.expression)) return name.expression.text;
  return null;
}
