/**
 * A small JSDoc block reader. The TypeScript parser attaches JSDoc only to some nodes, and we want
 * the same reading for a file header, a function and a property, so blocks are read from raw text.
 */

export interface JsDocTag {
  /** Tag name without `@`; `arg` and `argument` are reported as `param`. */
  tag: string;
  /** For `@param`: `host` or `args.host`. */
  name?: string;
  /** Text inside `{...}`, e.g. "string". */
  type?: string;
  /** `[name]`, `[name=default]` or a Closure-style `{type=}`. */
  optional: boolean;
  /** From `[name=default]`, as written. */
  default?: string;
  /** Text after the name, a leading "- " removed, whitespace collapsed. */
  text?: string;
}

export interface JsDocBlock {
  /** Text before the first tag (or of `@description`), "" when there is none. */
  description: string;
  tags: JsDocTag[];
}

/** Parses one `/** ... *\/` comment, delimiters included. */
export function parseJsDoc(comment: string): JsDocBlock {
  const body = comment.replace(/^\/\*\*/, "").replace(/\*\/$/, "");
  const lines = body.split(/\r?\n/).map((l) => l.replace(/^\s*\*? ?/, "").trimEnd());
  const descLines: string[] = [];
  const tagTexts: string[] = [];
  for (const line of lines) {
    if (/^\s*@\w/.test(line)) tagTexts.push(line.trim());
    else if (tagTexts.length > 0) tagTexts[tagTexts.length - 1] += `\n${line}`;
    else descLines.push(line);
  }
  const tags = tagTexts.map(parseTag);
  let description = tidy(descLines.join("\n"));
  if (!description) description = tags.find((t) => t.tag === "description")?.text ?? "";
  return { description, tags };
}

function parseTag(raw: string): JsDocTag {
  const m = /^@(\w+)\s*([\s\S]*)$/.exec(raw);
  const tag = normaliseTagName(m?.[1] ?? "");
  let rest = m?.[2] ?? "";
  const out: JsDocTag = { tag, optional: false };

  if (rest.startsWith("{")) {
    const end = matchingBrace(rest);
    if (end > 0) {
      let type = rest.slice(1, end).replace(/\s+/g, " ").trim();
      if (type.endsWith("=")) {
        out.optional = true;
        type = type.slice(0, -1).trim();
      }
      if (type) out.type = type;
      rest = rest.slice(end + 1).trimStart();
    }
  }

  if (tag === "param" || tag === "property") {
    const bracketed = /^\[\s*([^\]=\s]+)\s*(?:=([^\]]*))?\]/.exec(rest);
    const plain = /^([^\s]+)/.exec(rest);
    if (bracketed) {
      out.name = bracketed[1];
      out.optional = true;
      const def = bracketed[2]?.trim();
      if (def) out.default = def;
      rest = rest.slice(bracketed[0].length);
    } else if (plain) {
      out.name = plain[1];
      rest = rest.slice(plain[0].length);
    }
  }

  const text = rest.replace(/^\s*-\s+/, "").replace(/\s+/g, " ").trim();
  if (text) out.text = text;
  return out;
}

function normaliseTagName(name: string): string {
  return name === "arg" || name === "argument" ? "param" : name;
}

/** Index of the `}` closing the `{` at index 0, or -1. */
function matchingBrace(s: string): number {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === "{") depth++;
    else if (s[i] === "}" && --depth === 0) return i;
  }
  return -1;
}

/** Trims, and keeps paragraphs apart by one blank line at most. */
function tidy(text: string): string {
  return text.replace(/\n{3,}/g, "\n\n").trim();
}
