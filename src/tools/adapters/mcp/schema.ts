/**
 * The MCP tool YAML format and its checked form. `parseMcpTool` is the only way a YAML document
 * becomes an `McpToolSpec`:
 *
 *   name: math                     # tools.math.<mcp tool>
 *   type: mcp
 *   description: Arithmetic        # optional; default: the server's instructions
 *   tags: [math]
 *   timeout: 30                    # seconds per call (default 60)
 *   connect_timeout: 30            # seconds to start the server and complete the handshake (default 30)
 *   transport: stdio               # absent: stdio when `command` is given, http when `url` is
 *   command: node                  # executable, run without a shell
 *   args: [server.mjs]             # fixed arguments (no ${VAR} here: secrets belong in env)
 *   env: { API_KEY: ${API_KEY} }   # merged over a minimal safe environment (see SAFE_ENV_VARS)
 *   cwd: .                         # relative to this file's folder (default: this file's folder)
 *
 *   transport: http                # Streamable HTTP
 *   url: https://example.com/mcp
 *   headers: { Authorization: "Bearer ${TOKEN}" }
 *
 * `${NAME}` in env and header values is replaced from the host's environment when the file is
 * loaded; a variable that is not set fails the load with a ValidationError naming the variable
 * (never a value). `$${` writes a literal `${`. Replaced values are remembered as secrets so that
 * error messages can redact them (a server that echoes its token to stderr must not leak it).
 *
 * Every problem is reported with the file, the field path and what is accepted, all at once, the
 * same way the CLI tool format does.
 */
import path from "node:path";
import { z } from "zod";
import { lazy } from "../../../lazy.js";
import { fail, orEmpty, Problems, strict, type PathPart } from "../yaml-schema.js";
import { describeValue, toolNameProblem } from "../../validate.js";

export const DEFAULT_MCP_TIMEOUT_SECONDS = 60;
/** Starting a server (npx may download it first) is not a tool call: it has its own, separate bound. */
export const DEFAULT_MCP_CONNECT_TIMEOUT_SECONDS = 30;

/**
 * Host environment variables a stdio server inherits; everything else must be listed in `env`.
 * The MCP SDK always passes HOME, LOGNAME, PATH, SHELL, TERM, USER (its own safe list, on Windows
 * APPDATA, SYSTEMROOT, ...); we add the temp folder and locale, which many programs need to work
 * and which carry no secrets. API keys, tokens and cloud credentials in the host's environment do
 * not reach a server unless its YAML names them.
 */
export const SAFE_ENV_VARS: readonly string[] = ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TMPDIR", "TEMP", "TMP", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT"];

export interface McpStdioServer {
  transport: "stdio";
  command: string;
  args: string[];
  /** Only the YAML's `env` (interpolated); the safe host variables are added when spawning. */
  env: Record<string, string>;
  /** Absolute. */
  cwd: string;
}

export interface McpHttpServer {
  transport: "http";
  url: string;
  headers: Record<string, string>;
}

export interface McpToolSpec {
  name: string;
  description: string;
  tags: string[];
  /** Per call; a call also honours the caller's (smaller) budget. */
  timeoutMs: number;
  /** Spawn/reach + MCP handshake + tools/list. */
  connectTimeoutMs: number;
  server: McpStdioServer | McpHttpServer;
  /** Values that came from `${VAR}`: redacted from every message and stderr excerpt. */
  secrets: string[];
  /**
   * Set when `${VAR}`s of env/headers are not set: the server cannot be started, and this says
   * why. The tool still loads (listed as unavailable) so that it does not stop the others.
   */
  unavailable?: string;
  /** Where the definition came from (a file path), for messages. */
  source: string;
}



/** env/header values: YAML may type `PORT: 8080` as a number; the value is text either way. */
const textValue = lazy(() => z
  .union([z.string(), z.number(), z.boolean()], { error: "expected a string (numbers and booleans are turned into text)" })
  .transform(String));

const common = lazy(() => ({
  name: z.string({ error: "expected the tool name (a string)" }),
  type: z.literal("mcp").optional(),
  description: z.string().default(""),
  tags: orEmpty(z.array(z.string()), () => []),
  timeout: z.number().positive("expected a positive number of seconds").default(DEFAULT_MCP_TIMEOUT_SECONDS),
  connect_timeout: z.number().positive("expected a positive number of seconds").default(DEFAULT_MCP_CONNECT_TIMEOUT_SECONDS),
}));

const StdioSchema = lazy(() => strict({
  ...common,
  transport: z.literal("stdio"),
  command: z.string({ error: "expected the server's executable (e.g. node, npx, uvx, or a path)" }).min(1, "expected a non-empty executable name or path"),
  args: orEmpty(z.array(textValue, { error: "expected a list of arguments, e.g. [server.js, --verbose]" }), () => []),
  env: orEmpty(z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "environment variable names are letters, digits and _"), textValue), () => ({})),
  cwd: z.string().min(1, "expected a folder (relative to this file's folder)").optional(),
}));

const HttpSchema = lazy(() => strict({
  ...common,
  transport: z.literal("http"),
  url: z.string({ error: "expected the server's URL, e.g. https://example.com/mcp" }),
  headers: orEmpty(z.record(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "not a valid HTTP header name"), textValue), () => ({})),
}));

const TRANSPORTS = ["stdio", "http"] as const;




/** Header and env values may hold secrets: their problems never quote the value. */
function isSecretPath(at: readonly PathPart[]): boolean {
  return at.length >= 2 && (at[0] === "headers" || at[0] === "env");
}


const VAR_RE = /\$\$\{|\$\{([^}]*)\}/g;
const VAR_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Replace `${NAME}` in `value` from `env`. Problems (unset variable, bad syntax) go to `problems`
 * naming `where` and the variable; the value itself is never quoted.
 */
function interpolate(value: string, where: string, env: NodeJS.ProcessEnv, problems: Interpolation, secrets: Set<string>): string {
  return value.replace(VAR_RE, (match, name: string | undefined) => {
    if (match === "$${") return "${";
    if (name === undefined || !VAR_NAME_RE.test(name)) {
      problems.invalid.push(`${where}: \${${name ?? ""}} is not a valid variable reference; write \${NAME} with NAME made of letters, digits and _ (or $\${ for a literal \${)`);
      return "";
    }
    const v = env[name];
    if (v === undefined) {
      problems.unset.push(`${where}: environment variable ${name} is not set (referenced as \${${name}}); set it before starting, or remove the reference`);
      return "";
    }
    if (v.length > 0) secrets.add(v);
    return v;
  });
}

/** Problems of `${VAR}` references: a bad reference is a broken file; an unset variable is the host's state. */
interface Interpolation {
  invalid: string[];
  unset: string[];
}

function interpolateAll(values: Record<string, string>, field: string, env: NodeJS.ProcessEnv, problems: Interpolation, secrets: Set<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) out[key] = interpolate(value, `${field}.${key}`, env, problems, secrets);
  return out;
}

export interface ParseMcpOptions {
  /** Folder of the YAML file; `cwd` is resolved against it. */
  dir: string;
  /** Where `${VAR}` values come from; default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

/** Parse and check one MCP tool document. Throws ValidationError naming `source` and each bad field. */
export function parseMcpTool(doc: unknown, source: string, options: ParseMcpOptions): McpToolSpec {
  const env = options.env ?? process.env;
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) fail(source, ["(top level): expected a mapping with name, type: mcp, transport, ..."]);
  const raw = doc as Record<string, unknown>;

  // Pick the transport first so that each shape's errors (and its accepted keys) are the right ones.
  let transport = raw["transport"];
  if (transport === undefined || transport === null) {
    const hasCommand = raw["command"] !== undefined;
    const hasUrl = raw["url"] !== undefined;
    if (hasCommand === hasUrl) {
      fail(source, [
        `transport: expected one of ${TRANSPORTS.join(", ")}; got nothing${hasCommand ? " (and both command and url are given)" : ""}. ` +
          "stdio needs command (and optional args, env, cwd); http needs url (and optional headers)",
      ]);
    }
    transport = hasCommand ? "stdio" : "http";
  }
  if (typeof transport !== "string" || !(TRANSPORTS as readonly string[]).includes(transport)) {
    fail(source, [`transport: expected one of ${TRANSPORTS.join(", ")} (http means Streamable HTTP); got ${describeValue(transport)}`]);
  }
  const input = { ...raw, transport };
  const collected = new Problems(input, isSecretPath);
  const problems = collected.list;
  const vars: Interpolation = { invalid: [], unset: [] };
  const secrets = new Set<string>();
  let server: McpStdioServer | McpHttpServer | null = null;
  let d: { name?: string | undefined; description?: string | undefined; tags?: string[] | undefined; timeout?: number | undefined; connect_timeout?: number | undefined };
  // Field by field, so that every problem of the file is listed at once.
  if (transport === "stdio") {
    const s = collected.fields(StdioSchema.shape, input, []).data;
    d = s;
    if (s.command !== undefined && s.args !== undefined && s.env !== undefined) {
      server = { transport: "stdio", command: s.command, args: s.args, env: interpolateAll(s.env, "env", env, vars, secrets), cwd: path.resolve(options.dir, s.cwd ?? ".") };
    }
  } else {
    const h = collected.fields(HttpSchema.shape, input, []).data;
    d = h;
    if (h.url !== undefined) {
      let url: URL | null = null;
      try {
        url = new URL(h.url);
      } catch {
        problems.push(`url: expected an absolute http:// or https:// URL, e.g. https://example.com/mcp; got ${describeValue(h.url)}`);
      }
      if (url && url.protocol !== "http:" && url.protocol !== "https:") {
        problems.push(`url: expected an http:// or https:// URL; got the scheme ${JSON.stringify(url.protocol)}`);
      }
      if (h.headers !== undefined) server = { transport: "http", url: h.url, headers: interpolateAll(h.headers, "headers", env, vars, secrets) };
    }
  }
  if (d.name !== undefined) {
    const nameProblem = toolNameProblem(d.name);
    if (nameProblem) problems.push(`name: ${nameProblem}`);
  }
  problems.push(...vars.invalid);
  collected.throwIfAny(source);

  const spec: McpToolSpec = {
    name: d.name!,
    description: d.description ?? "",
    tags: d.tags ?? [],
    timeoutMs: Math.round((d.timeout ?? DEFAULT_MCP_TIMEOUT_SECONDS) * 1000),
    connectTimeoutMs: Math.round((d.connect_timeout ?? DEFAULT_MCP_CONNECT_TIMEOUT_SECONDS) * 1000),
    server: server!,
    // Longest first, so that redacting a secret that contains another one hides all of it.
    secrets: [...secrets].sort((a, b) => b.length - a.length),
    source,
  };
  // An unset variable is the host's state, not a broken file: the other tools still load.
  if (vars.unset.length) spec.unavailable = `MCP server '${spec.name}' cannot start: ${vars.unset.join("; ")} (in ${source})`;
  return spec;
}
