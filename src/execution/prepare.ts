/**
 * Code preparation shared by every executor: strip TypeScript, then rewrite a snippet so that it
 * runs as one async function while its top-level declarations persist as globals of the executor's
 * context, like the Node REPL.
 *
 *   const x = 1; function f() {}; import { a } from "m"; x + 1
 * becomes (the prelude on the first line, so the agent's line numbers stay right):
 *   (async () => { let x, a; <bind x, f, a as global accessors>; (x = 1); function f() {};
 *   ({ a } = await __tcm_import("m")); return (x + 1);
 *   })()
 *
 * The bindings are locals (fast in loops) that later runs reach through the global accessors.
 *
 * let/const lose their block semantics (reassignment is allowed across runs), as in the Node REPL.
 * A promise left as the last value is awaited, so `tools.x.y()` without `await` still shows its result.
 */
import { createRequire } from "node:module";
import type { Node } from "acorn";
import type * as Sucrase from "sucrase";
import { BoundedCache } from "./bounded-cache.js";
import { IMPORT_FN } from "./guest/import-fn.js";

export interface PreparedSnippet {
  /** Script source to compile in the executor's context; evaluates to a Promise of the last value. */
  script: string;
}

export class CodeSyntaxError extends SyntaxError {
  override readonly name = "SyntaxError";
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`${message} (line ${line}, column ${column + 1})`);
  }
}

export { IMPORT_FN };

/**
 * The parser and the TypeScript stripper load on the first preparation, not when ts-code-mode is
 * imported (together ~50 ms, paid by every CLI call and MCP handshake that never runs code).
 * `require`, not `await import()`: preparing is synchronous on the warm path, and both packages
 * ship CommonJS builds.
 */
const requireLazy = createRequire(import.meta.url);
let acornParser: typeof import("acorn").Parser | undefined;
let sucraseTransform: typeof Sucrase.transform | undefined;
const Parser = (): typeof import("acorn").Parser => (acornParser ??= (requireLazy("acorn") as typeof import("acorn")).Parser);
const transform: typeof Sucrase.transform = (code, options) => (sucraseTransform ??= (requireLazy("sucrase") as typeof Sucrase).transform)(code, options);

/**
 * Load the parser now rather than on the first preparation. An executor calls this while its guest
 * process is still starting (issue 42, cold start): the host would otherwise load it (~10 ms, more
 * on a loaded machine) after the guest is ready, on the way to the first result.
 */
export function loadParser(): void {
  Parser();
}

/** Local helper name in prepared scripts that exports a declaration as a global accessor. */
const BIND_FN = "__tcm_bind";

interface AnyNode extends Node {
  [key: string]: unknown;
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

/** Preparations by source, process-wide: bounded in count and characters (source and result), oldest forgotten first. */
const CACHE_LIMIT = 500;
const CACHE_CHARS = 64 * 1_048_576;
const cache = new BoundedCache<string, PreparedSnippet>(CACHE_LIMIT, CACHE_CHARS, (code, p) => code.length + p.script.length);
const moduleCache = new BoundedCache<string, string>(CACHE_LIMIT, CACHE_CHARS, (key, compiled) => key.length + compiled.length);

/** Whether `code` is prepared already (in the cache): Executor.prepareAhead's test looks. */
export function isPrepared(code: string): boolean {
  return cache.has(code);
}

/** Prepare an agent snippet. Throws CodeSyntaxError. Results are cached by source text. */
export function prepareSnippet(code: string): PreparedSnippet {
  const hit = cache.get(code);
  if (hit) return hit;
  const prepared = transformSnippet(stripTypes(code));
  cache.set(code, prepared);
  return prepared;
}

/**
 * Prepare a workflow module: TypeScript stripped, ESM turned into a CommonJS body that the
 * executor wraps in `function (exports, require, module) { ... }`.
 */
export function prepareModule(source: string, fileName = "workflow.ts"): string {
  const key = `${fileName}\u0000${source}`;
  const hit = moduleCache.get(key);
  if (hit !== undefined) return hit;
  const compiled = transformModule(source, fileName);
  moduleCache.set(key, compiled);
  return compiled;
}

function transformModule(source: string, fileName: string): string {
  try {
    return transform(source, {
      transforms: ["typescript", "imports"],
      disableESTransforms: true,
      filePath: fileName,
    }).code;
  } catch (err) {
    throw toSyntaxError(err);
  }
}

function stripTypes(code: string): string {
  // Plain JavaScript skips sucrase; acorn accepting it is the cheap test. Not when the code has a
  // `<`: `f<T>(x)` is TypeScript with explicit type arguments but also valid JavaScript meaning
  // `(f < T) > (x)`, so anything with a `<` goes through the TypeScript transform.
  if (!code.includes("<") && tryParse(code)) return code;
  try {
    return transform(code, {
      transforms: ["typescript"],
      disableESTransforms: true,
      keepUnusedImports: true,
    }).code;
  } catch (err) {
    throw toSyntaxError(err);
  }
}

function parse(code: string): AnyNode {
  return Parser().parse(code, {
    ecmaVersion: "latest",
    sourceType: "module",
    allowAwaitOutsideFunction: true,
    allowHashBang: true,
  }) as unknown as AnyNode;
}

function tryParse(code: string): boolean {
  try {
    parse(code);
    return true;
  } catch {
    return false;
  }
}

function toSyntaxError(err: unknown): CodeSyntaxError {
  const e = err as { message?: string; loc?: { line: number; column: number } };
  const message = String(e.message ?? err).replace(/\s*\(\d+:\d+\)\s*$/, "");
  return new CodeSyntaxError(message, e.loc?.line ?? 1, e.loc?.column ?? 0);
}

function transformSnippet(source: string): PreparedSnippet {
  let program = parseOrThrow(source);
  let js = source;
  // Dynamic imports are renamed in a first pass so later rewrites can copy text verbatim.
  if (source.includes("import")) {
    const importEdits: Edit[] = [];
    collectImportExpressions(program, importEdits);
    if (importEdits.length) {
      js = applyEdits(source, importEdits);
      program = parseOrThrow(js);
    }
  }
  const body = program.body as AnyNode[];
  const edits: Edit[] = [];
  const declared = new Set<string>();
  const hoistedFunctions: string[] = [];
  let completionValue = false;

  body.forEach((rawStmt, index) => {
    let stmt = rawStmt;
    // `export const x = 1` in a snippet is treated as the declaration itself.
    if ((stmt.type === "ExportNamedDeclaration" || stmt.type === "ExportDefaultDeclaration") && stmt.declaration) {
      const decl = stmt.declaration as AnyNode;
      edits.push({ start: stmt.start, end: decl.start, text: "" });
      stmt = decl;
    }
    switch (stmt.type) {
      case "VariableDeclaration":
        edits.push({ start: stmt.start, end: stmt.end, text: rewriteVariables(js, stmt, declared) });
        return;
      case "FunctionDeclaration": {
        const name = (stmt.id as AnyNode | null)?.name as string | undefined;
        if (name) {
          declared.add(name);
          hoistedFunctions.push(name);
        }
        return;
      }
      case "ClassDeclaration": {
        const name = (stmt.id as AnyNode).name as string;
        declared.add(name);
        edits.push({ start: stmt.start, end: stmt.start, text: `${name} = ` });
        edits.push({ start: stmt.end, end: stmt.end, text: ";" });
        return;
      }
      case "ImportDeclaration":
        edits.push({ start: stmt.start, end: stmt.end, text: rewriteImport(stmt, declared) });
        return;
      case "ExpressionStatement":
        if (index === body.length - 1) {
          const expr = stmt.expression as AnyNode;
          edits.push({ start: stmt.start, end: expr.start, text: "return (" });
          edits.push({ start: expr.end, end: stmt.end, text: ");" });
        }
        return;
      default:
        // `for (var i ...)`, `if (x) { var y }`: var is function-scoped, so at top level it persists too.
        hoistNestedVars(stmt, null, "", js, edits, declared);
        if (index === body.length - 1) completionValue = returnCompletion(stmt, js, edits);
        return;
    }
  });

  const rewritten = applyEdits(js, edits);
  const vars = [...declared].filter((n) => !hoistedFunctions.includes(n));
  // Declarations are locals of the async function (fast: a global of a vm context costs ~750 ns
  // per write, a local next to nothing), exported as accessors on the global object so later runs
  // read and write the very same binding, and closures made in this run stay in step with them.
  const exported = [...declared].map((n) => `${BIND_FN}(${JSON.stringify(n)}, () => ${n}, (v) => { ${n} = v; }); `).join("");
  const prelude =
    "(async () => { " +
    (completionValue ? `let ${COMPLETION_VAR}; ` : "") +
    (vars.length ? `let ${vars.join(", ")}; ` : "") +
    (exported ? `const ${BIND_FN} = (n, g, s) => { try { Object.defineProperty(globalThis, n, { get: g, set: s, configurable: true, enumerable: true }); } catch {} }; ${exported}` : "");
  return { script: `${prelude}${rewritten}\n})()` };
}

/** Local in prepared scripts holding the completion value of a last `if`/`try`/`switch`/block. */
const COMPLETION_VAR = "__tcm_completion";

/** Statements whose completion value the Node REPL shows when they end the input. Loops are left out: their value is rarely wanted and costs a write per iteration. */
const COMPLETION_STATEMENTS = new Set(["IfStatement", "TryStatement", "BlockStatement", "SwitchStatement", "LabeledStatement"]);

/**
 * A snippet that ends with `if`/`try`/`switch`/a block gives the value of the last expression
 * statement that ran in it, as the Node REPL does (agents often end with `try { await x() } catch
 * (e) { e.message }`): each expression statement in completion position records its value and the
 * function returns it. A `finally` block's values are not recorded (its completion is the try's).
 * A last `{ a: 1 }` is an object literal, as in the REPL. Returns whether the completion variable is used.
 */
function returnCompletion(stmt: AnyNode, js: string, edits: Edit[]): boolean {
  if (!COMPLETION_STATEMENTS.has(stmt.type)) return false;
  if (stmt.type === "BlockStatement" && isObjectLiteral(js.slice(stmt.start, stmt.end))) {
    edits.push({ start: stmt.start, end: stmt.start, text: "return (" });
    edits.push({ start: stmt.end, end: stmt.end, text: ");" });
    return false;
  }
  edits.push({ start: stmt.start, end: stmt.start, text: `${COMPLETION_VAR} = undefined; ` });
  recordCompletions(stmt, edits);
  edits.push({ start: stmt.end, end: stmt.end, text: `; return ${COMPLETION_VAR};` });
  return true;
}

function recordCompletions(node: AnyNode | null | undefined, edits: Edit[]): void {
  if (!node) return;
  switch (node.type) {
    case "ExpressionStatement": {
      const expr = node.expression as AnyNode;
      edits.push({ start: expr.start, end: expr.start, text: `${COMPLETION_VAR} = (` });
      edits.push({ start: expr.end, end: expr.end, text: ")" });
      return;
    }
    case "BlockStatement":
      for (const s of node.body as AnyNode[]) recordCompletions(s, edits);
      return;
    case "IfStatement":
      recordCompletions(node.consequent as AnyNode, edits);
      recordCompletions(node.alternate as AnyNode | null, edits);
      return;
    case "TryStatement":
      recordCompletions(node.block as AnyNode, edits);
      recordCompletions((node.handler as AnyNode | null)?.body as AnyNode | undefined, edits);
      return;
    case "SwitchStatement":
      for (const c of node.cases as AnyNode[]) for (const s of c.consequent as AnyNode[]) recordCompletions(s, edits);
      return;
    case "LabeledStatement":
      recordCompletions(node.body as AnyNode, edits);
      return;
  }
}

function isObjectLiteral(text: string): boolean {
  try {
    const program = parse(`(${text})`);
    const only = (program.body as AnyNode[])[0];
    return (program.body as AnyNode[]).length === 1 && only?.type === "ExpressionStatement" && (only.expression as AnyNode).type === "ObjectExpression";
  } catch {
    return false;
  }
}

function parseOrThrow(code: string): AnyNode {
  try {
    return parse(code);
  } catch (err) {
    throw toSyntaxError(err);
  }
}

function rewriteVariables(js: string, decl: AnyNode, declared: Set<string>): string {
  const parts: string[] = [];
  for (const d of decl.declarations as AnyNode[]) {
    const id = d.id as AnyNode;
    bindingNames(id, declared);
    const init = d.init as AnyNode | null;
    const target = js.slice(id.start, id.end);
    if (init) parts.push(`(${target} = ${js.slice(init.start, init.end)});`);
    else if (decl.kind !== "var") parts.push(`(${target} = undefined);`);
  }
  return parts.join(" ");
}

const FUNCTION_NODES = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression", "ClassDeclaration", "ClassExpression"]);

/**
 * Turns `var` declarations nested in a top-level statement (outside any function) into assignments
 * to the persisted globals: `for (var i = 0; ...)` → `for ((i = 0); ...)`, `for (var k of xs)` →
 * `for (k of xs)`, `{ var a = 1; }` → `{ (a = 1); }`.
 */
function hoistNestedVars(node: AnyNode, parent: AnyNode | null, key: string, js: string, edits: Edit[], declared: Set<string>): void {
  if (FUNCTION_NODES.has(node.type)) return;
  if (node.type === "VariableDeclaration" && node.kind === "var") {
    const decls = node.declarations as AnyNode[];
    let text: string;
    if (parent?.type === "ForStatement" && key === "init") {
      text = decls
        .map((d) => {
          bindingNames(d.id as AnyNode, declared);
          const id = js.slice((d.id as AnyNode).start, (d.id as AnyNode).end);
          const init = d.init as AnyNode | null;
          return init ? `(${id} = ${js.slice(init.start, init.end)})` : id;
        })
        .join(", ");
    } else if ((parent?.type === "ForInStatement" || parent?.type === "ForOfStatement") && key === "left") {
      const id = decls[0]!.id as AnyNode;
      bindingNames(id, declared);
      text = js.slice(id.start, id.end);
    } else {
      text = rewriteVariables(js, node, declared) || ";";
    }
    edits.push({ start: node.start, end: node.end, text });
    return;
  }
  for (const k of Object.keys(node)) {
    const child = node[k];
    if (Array.isArray(child)) {
      for (const c of child) if (c && typeof c === "object" && typeof (c as AnyNode).type === "string") hoistNestedVars(c as AnyNode, node, k, js, edits, declared);
    } else if (child && typeof child === "object" && typeof (child as AnyNode).type === "string") {
      hoistNestedVars(child as AnyNode, node, k, js, edits, declared);
    }
  }
}

function rewriteImport(stmt: AnyNode, declared: Set<string>): string {
  const source = JSON.stringify((stmt.source as AnyNode).value);
  const specifiers = stmt.specifiers as AnyNode[];
  if (specifiers.length === 0) return `await ${IMPORT_FN}(${source});`;
  const named: string[] = [];
  let namespace: string | null = null;
  for (const s of specifiers) {
    const local = (s.local as AnyNode).name as string;
    declared.add(local);
    if (s.type === "ImportNamespaceSpecifier") namespace = local;
    else if (s.type === "ImportDefaultSpecifier") named.push(`default: ${local}`);
    else {
      const imported = s.imported as AnyNode;
      const key = imported.type === "Literal" ? JSON.stringify(imported.value) : (imported.name as string);
      named.push(`${key}: ${local}`);
    }
  }
  const ns = namespace ?? "__tcm_ns";
  const load = `${namespace ? `(${ns} = ` : "("}await ${IMPORT_FN}(${source}))`;
  if (!named.length) return `${load};`;
  if (!namespace) return `({ ${named.join(", ")} } = await ${IMPORT_FN}(${source}));`;
  return `${load}; ({ ${named.join(", ")} } = ${ns});`;
}

function bindingNames(pattern: AnyNode, out: Set<string>): void {
  switch (pattern.type) {
    case "Identifier":
      out.add(pattern.name as string);
      return;
    case "ObjectPattern":
      for (const p of pattern.properties as AnyNode[]) bindingNames((p.type === "RestElement" ? p.argument : p.value) as AnyNode, out);
      return;
    case "ArrayPattern":
      for (const el of pattern.elements as Array<AnyNode | null>) if (el) bindingNames(el, out);
      return;
    case "RestElement":
      bindingNames(pattern.argument as AnyNode, out);
      return;
    case "AssignmentPattern":
      bindingNames(pattern.left as AnyNode, out);
      return;
  }
}

/** `import("x")` anywhere → `__tcm_import("x")`, so imports resolve from the executor's deps. */
function collectImportExpressions(node: AnyNode, edits: Edit[]): void {
  if (node.type === "ImportExpression") edits.push({ start: node.start, end: node.start + "import".length, text: IMPORT_FN });
  for (const key of Object.keys(node)) {
    const child = node[key];
    if (Array.isArray(child)) {
      for (const c of child) if (c && typeof c === "object" && typeof (c as AnyNode).type === "string") collectImportExpressions(c as AnyNode, edits);
    } else if (child && typeof child === "object" && typeof (child as AnyNode).type === "string") {
      collectImportExpressions(child as AnyNode, edits);
    }
  }
}

function applyEdits(src: string, edits: Edit[]): string {
  // Edits never overlap except at shared boundaries; sort by start, insertions before replacements.
  const sorted = [...edits].sort((a, b) => a.start - b.start || a.end - b.end);
  let out = "";
  let pos = 0;
  for (const e of sorted) {
    out += src.slice(pos, e.start) + e.text;
    pos = e.end;
  }
  return out + src.slice(pos);
}
