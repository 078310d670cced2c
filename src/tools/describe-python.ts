/**
 * `tools.describe(name)` for a Python session: the tool as Python stubs, one `def` per callable
 * with keyword-only parameters (how a Python guest calls it: tools.<tool>.<callable>(arg=value)),
 * type hints from the parameter specs and a docstring per callable. The TypeScript form is
 * describe.ts; both are generated from the same ToolInfo.
 */
import type { JsonValue } from "../storage/protocol.js";
import type { CallableInfo, ParamSpec, ParamType, ToolInfo } from "./protocol.js";

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

function scalarHint(type: ParamType): string {
  switch (type) {
    case "string":
      return "str";
    case "boolean":
      return "bool";
    case "integer":
      return "int";
    case "number":
      return "float";
    case "array":
      return "list";
    case "object":
      return "dict";
    default:
      return "Any";
  }
}

function pyLiteral(v: JsonValue): string {
  if (v === null) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (Array.isArray(v)) return `[${v.map(pyLiteral).join(", ")}]`;
  if (typeof v === "object") return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${pyLiteral(x)}`).join(", ")}}`;
  return JSON.stringify(v);
}

/** Python type hint of one parameter: Literal[...] for enums, list[T] for typed arrays. */
export function pythonHint(p: Pick<ParamSpec, "type" | "items" | "enum">): string {
  if (p.enum && p.enum.length > 0) return `Literal[${p.enum.map(pyLiteral).join(", ")}]`;
  if (p.type === "array" && p.items) return `list[${scalarHint(p.items)}]`;
  return scalarHint(p.type);
}

function paramText(p: ParamSpec): string {
  const hint = pythonHint(p);
  if (p.required) return `${p.name}: ${hint}`;
  return `${p.name}: ${hint} = ${p.default === undefined ? "None" : pyLiteral(p.default)}`;
}

/** `def get(*, url: str, silent: bool = None) -> Any:` with its docstring, indented by `indent`. */
function defLines(label: string, name: string, c: CallableInfo, indent: string): string[] {
  // Parameters whose names are not identifiers can only be passed as one dict: tools.x.y({"a-b": 1}).
  const plain = c.params.filter((p) => IDENTIFIER.test(p.name));
  const odd = c.params.filter((p) => !IDENTIFIER.test(p.name));
  const ordered = [...plain.filter((p) => p.required), ...plain.filter((p) => !p.required)];
  const params = [...(ordered.length ? ["*", ...ordered.map(paramText)] : []), ...(odd.length ? ["**kwargs"] : [])];
  const named = IDENTIFIER.test(name);
  const doc = [c.description || name];
  const documented = c.params.filter((p) => p.description || !IDENTIFIER.test(p.name));
  if (documented.length) doc.push("", "Args:", ...documented.map((p) => `    ${p.name}: ${p.description ?? ""}${IDENTIFIER.test(p.name) ? "" : " (pass in a dict)"}`.trimEnd()));
  return [
    ...(named ? [] : [`${indent}# call as ${label}[${JSON.stringify(name)}](...)`]),
    `${indent}def ${named ? name : name.replace(/\W/g, "_").replace(/^(\d)/, "_$1")}(${params.join(", ")}) -> Any:`,
    `${indent}    """${doc.map((l, i) => (i === 0 || l === "" ? l : `${indent}    ${l}`)).join("\n")}"""`,
    "",
  ];
}

export function describeToolPython(info: ToolInfo): string {
  const label = IDENTIFIER.test(info.name) ? `tools.${info.name}` : `tools[${JSON.stringify(info.name)}]`;
  const lines = [
    `# ${label}: ${info.description}`,
    `# Call as ${label}.<callable>(arg=value, ...); await ${label}.<callable>.call_async(...) runs calls in parallel (asyncio.gather).`,
    `class ${IDENTIFIER.test(info.name) ? info.name : "tool"}:`,
  ];
  for (const c of info.callables) lines.push(...defLines(label, c.name, c, "    "));
  if (info.direct) lines.push(`    # The whole command: ${label}(arg=value, ...)`, ...defLines(label, "__call__", info.direct, "    "));
  if (!info.callables.length && !info.direct) lines.push("    pass");
  return lines.join("\n").trimEnd() + "\n";
}
