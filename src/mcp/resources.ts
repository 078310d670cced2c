/**
 * Workflows (their source) and artifacts as MCP resources, so hosts that show resources can attach
 * them without a tool call: `resources/list` (paginated, workflows then artifacts, by name),
 * `resources/templates/list` (`workflow://{name}`, `artifact://{name}`) and `resources/read`.
 * A read is cut at MAX_RESOURCE_CHARS with a note saying how to load the rest from code, so no
 * reply can flood the transport. After a call that may have changed the store, the server sends
 * `notifications/resources/list_changed` when the list differs from what the client last saw.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
} from "@modelcontextprotocol/sdk/types.js";
import type { Session } from "../session.js";
import type { ArtifactData, ArtifactInfo } from "../storage/protocol.js";
import { cutMiddle } from "./truncate.js";

/** Resources per `resources/list` page. */
export const RESOURCE_PAGE_SIZE = 100;
/** Longest text (or base64) one `resources/read` returns. */
export const MAX_RESOURCE_CHARS = 1_000_000;
/** The MCP error code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;

const WORKFLOW = "workflow://";
const SKILL = "skill://";
const ARTIFACT = "artifact://";

const MIME: Record<ArtifactInfo["kind"], string> = { text: "text/plain", json: "application/json", bytes: "application/octet-stream" };

export interface CodeModeResources {
  /** Call after anything that may have changed workflows or artifacts. */
  changed(): Promise<void>;
}

export function registerCodeModeResources(server: McpServer, session: Session, options: { pageSize?: number; maxChars?: number } = {}): CodeModeResources {
  const pageSize = options.pageSize ?? RESOURCE_PAGE_SIZE;
  const maxChars = options.maxChars ?? MAX_RESOURCE_CHARS;
  /** What the client last listed; null until it lists, so nothing is sent to clients that never asked. */
  let seen: string | null = null;

  const all = async (): Promise<Resource[]> => {
    const [workflows, artifacts, skills] = await Promise.all([session.listWorkflows(), session.listArtifacts(), skillResources(session)]);
    return [
      ...[...workflows]
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((w): Resource => ({ uri: `${WORKFLOW}${w.name}`, name: w.name, title: `workflow ${w.name}`, description: w.description, mimeType: "text/x-typescript" })),
      ...[...artifacts]
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((a): Resource => ({ uri: artifactUri(a.name), name: a.name, title: `artifact ${a.name}`, description: a.description, mimeType: MIME[a.kind], size: a.size })),
      ...skills,
    ];
  };
  const fingerprint = (list: readonly Resource[]) => JSON.stringify(list.map((r) => [r.uri, r.description, r.size]));

  server.server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    const list = await all();
    seen = fingerprint(list);
    const offset = decodeCursor(request.params?.cursor);
    const next = offset + pageSize;
    return { resources: list.slice(offset, next), ...(next < list.length ? { nextCursor: encodeCursor(next) } : {}) };
  });

  server.server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      { uriTemplate: `${WORKFLOW}{name}`, name: "workflow", title: "Saved workflow (TypeScript source)", mimeType: "text/x-typescript" },
      { uriTemplate: `${ARTIFACT}{name}`, name: "artifact", title: "Stored artifact (text, JSON or bytes)", description: "Names with / may be written as is or percent-encoded" },
      { uriTemplate: `${SKILL}{name}/SKILL.md`, name: "skill", title: "Agent Skill instructions (SKILL.md)", mimeType: "text/markdown" },
      { uriTemplate: `${SKILL}{name}/{+path}`, name: "skill-file", title: "A file of an Agent Skill (scripts/, references/, assets/)" },
    ],
  }));

  server.server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri;
    if (uri.startsWith(WORKFLOW)) return readWorkflow(session, uri, decodeName(uri, WORKFLOW), maxChars);
    if (uri.startsWith(ARTIFACT)) return readArtifact(session, uri, decodeName(uri, ARTIFACT), maxChars);
    if (uri.startsWith(SKILL)) return readSkillFile(session, uri, maxChars);
    throw new McpError(ErrorCode.InvalidParams, `Unknown resource ${JSON.stringify(uri)}: this server has workflow://{name}, artifact://{name} and skill://{name}/{path}`);
  });

  return {
    async changed() {
      if (seen === null) return;
      const now = fingerprint(await all());
      if (now === seen) return;
      seen = now;
      await server.server.sendResourceListChanged();
    },
  };
}

export function artifactUri(name: string): string {
  return `${ARTIFACT}${encodeURIComponent(name).replace(/%2F/g, "/")}`;
}

function decodeName(uri: string, scheme: string): string {
  const raw = uri.slice(scheme.length);
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new McpError(ErrorCode.InvalidParams, `Malformed resource URI ${JSON.stringify(uri)}`);
  }
}

async function readWorkflow(session: Session, uri: string, name: string, maxChars: number): Promise<ReadResourceResult> {
  const workflow = await session.getWorkflow(name).catch((err: unknown) => notFound(err));
  if (!workflow) throw new McpError(RESOURCE_NOT_FOUND, `No workflow named ${JSON.stringify(name)}`, { uri });
  return { contents: [{ uri, mimeType: "text/x-typescript", text: cut(workflow.source, maxChars, `(await workflows.get(${JSON.stringify(name)})).source`) }] };
}

async function readArtifact(session: Session, uri: string, name: string, maxChars: number): Promise<ReadResourceResult> {
  // Through dispatch: a missing artifact gets the same "Did you mean" message as artifacts.load.
  const data = (await session.dispatch("artifacts", "load", [name]).catch((err: unknown) => notFound(err, uri))) as ArtifactData;
  const load = `await artifacts.load(${JSON.stringify(name)})`;
  if (data instanceof Uint8Array) {
    const base64 = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64");
    if (base64.length <= maxChars) return { contents: [{ uri, mimeType: MIME.bytes, blob: base64 }] };
    return {
      contents: [{ uri, mimeType: "text/plain", text: `[${data.byteLength.toLocaleString("en-US")} bytes: too large to read as a resource (limit ${maxChars.toLocaleString("en-US")} characters of base64); read slices in run_code with (${load}).subarray(start, end)]` }],
    };
  }
  if (typeof data === "string") return { contents: [{ uri, mimeType: MIME.text, text: cut(data, maxChars, load) }] };
  return { contents: [{ uri, mimeType: MIME.json, text: cut(JSON.stringify(data, null, 2) ?? "null", maxChars, load) }] };
}

/** Each skill's SKILL.md and the files under it (names, paths and sizes only; nothing is read). */
async function skillResources(session: Session): Promise<Resource[]> {
  const out: Resource[] = [];
  for (const skill of await session.listSkills()) {
    out.push({ uri: `${SKILL}${skill.name}/SKILL.md`, name: `${skill.name}/SKILL.md`, title: `skill ${skill.name}`, description: skill.description, mimeType: "text/markdown" });
    const details = await session.loadSkill(skill.name).catch(() => null);
    for (const p of details?.resources ?? []) out.push({ uri: `${SKILL}${skill.name}/${encodeURI(p)}`, name: `${skill.name}/${p}`, title: `${p} of skill ${skill.name}` });
  }
  return out;
}

async function readSkillFile(session: Session, uri: string, maxChars: number): Promise<ReadResourceResult> {
  const rest = decodeName(uri, SKILL);
  const slash = rest.indexOf("/");
  if (slash <= 0) throw new McpError(RESOURCE_NOT_FOUND, `A skill resource is skill://{name}/{path}, e.g. skill://csv-summary/SKILL.md; got ${JSON.stringify(uri)}`, { uri });
  const [name, file] = [rest.slice(0, slash), rest.slice(slash + 1)];
  // Through dispatch: the same confinement and "Did you mean" as skills.read in run_code.
  const data = (await session.dispatch("skills", "read", [name, file]).catch((err: unknown) => notFound(err, uri))) as string | Uint8Array;
  const read = `await skills.read(${JSON.stringify(name)}, ${JSON.stringify(file)})`;
  if (typeof data === "string") return { contents: [{ uri, mimeType: file.endsWith(".md") ? "text/markdown" : "text/plain", text: cut(data, maxChars, read) }] };
  const base64 = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64");
  if (base64.length <= maxChars) return { contents: [{ uri, mimeType: MIME.bytes, blob: base64 }] };
  return { contents: [{ uri, mimeType: "text/plain", text: `[${data.byteLength.toLocaleString("en-US")} bytes: too large to read as a resource; read slices in run_code with (${read}).subarray(start, end)]` }] };
}

/** The text, or its head and tail with a note naming the full length and how to read the rest. */
function cut(text: string, maxChars: number, load: string): string {
  if (text.length <= maxChars) return text;
  const note = `\n[resource cut: it is ${text.length.toLocaleString("en-US")} characters, this read shows ${maxChars.toLocaleString("en-US")}; read the rest in run_code, e.g. (${load}).slice(start, end)]`;
  return cutMiddle(text, Math.max(0, maxChars - note.length - 64)) + note;
}

function notFound(err: unknown, uri?: string): never {
  const e = err instanceof Error ? err : new Error(String(err));
  if (e.name === "NotFoundError" || e.name === "InvalidNameError" || e.name === "ValidationError") throw new McpError(RESOURCE_NOT_FOUND, e.message, uri !== undefined ? { uri } : undefined);
  throw e;
}

function encodeCursor(offset: number): string {
  return Buffer.from(`offset:${offset}`).toString("base64url");
}

function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const m = /^offset:(\d{1,9})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!m) throw new McpError(ErrorCode.InvalidParams, "Invalid cursor: pass the nextCursor of the previous resources/list page");
  return Number(m[1]);
}
