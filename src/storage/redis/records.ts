/**
 * What the Redis stores write as JSON, and the input checks they share with FileStorage's wording,
 * so a bad record or option fails the same way whichever backend holds the data.
 */
import { z } from "zod";
import { lazy } from "../../lazy.js";
import { StorageError, ValidationError } from "../../errors.js";
import { assertJsonObject } from "../codec.js";
import type { ArtifactInfo, JsonValue, WorkflowRecord } from "../protocol.js";
import { workflowRecordSchema } from "../workflow-record.js";

export { checkWorkflowRecord, workflowRecordSchema } from "../workflow-record.js";

/**
 * Artifact metadata as stored. Times are epoch milliseconds at the very start of the JSON text so
 * the save script can read the previous times and write the new ones without a JSON library (Lua's
 * cjson would re-encode the user's metadata and round numbers to 14 digits).
 */
export const artifactMetaSchema = lazy(() => z.object({
  createdMs: z.number().int(),
  updatedMs: z.number().int(),
  /** Size as the quotas count it (absent in entries written before quotas). */
  q: z.number().int().nonnegative().optional(),
  v: z.literal(1),
  kind: z.enum(["text", "bytes", "json"]),
  size: z.number().int().nonnegative(),
  sha256: z.string(),
  description: z.string(),
  metadata: z.record(z.string(), z.json()),
}));
export type ArtifactMeta = z.infer<typeof artifactMetaSchema>;

const optionsSchema = lazy(() => z
  .object({ description: z.string().optional(), metadata: z.unknown().optional() })
  .strict()
  .optional());

/**
 * A stored workflow JSON back into a record; `where` names the key for the error. Listing parses
 * thousands of these, so entries we wrote ourselves pass a plain type check and only a suspect one
 * goes through zod (for its error message): that keeps a 10,000-workflow listing well under 100 ms.
 */
export function parseWorkflowJson(text: string, where: string): WorkflowRecord {
  const value = parseJson(text);
  if (looksLikeWorkflowRecord(value)) return value;
  const parsed = workflowRecordSchema.safeParse(value);
  if (!parsed.success) throw corrupt(where, z.prettifyError(parsed.error));
  return parsed.data;
}

export function parseArtifactMeta(text: string, where: string): ArtifactMeta {
  const value = parseJson(text);
  if (looksLikeArtifactMeta(value)) return value;
  const parsed = artifactMetaSchema.safeParse(value);
  if (!parsed.success) throw corrupt(where, z.prettifyError(parsed.error));
  return parsed.data;
}

type Loose = Record<string, unknown>;
const isObject = (v: unknown): v is Loose => typeof v === "object" && v !== null && !Array.isArray(v);
const optional = (v: unknown, type: "string" | "boolean") => v === undefined || typeof v === type;

/** The same rules as workflowRecordSchema, as plain checks (JSON.parse output is already JSON). */
function looksLikeWorkflowRecord(v: unknown): v is WorkflowRecord {
  if (!isObject(v)) return false;
  if (typeof v["name"] !== "string" || typeof v["source"] !== "string" || typeof v["description"] !== "string") return false;
  if (typeof v["createdAt"] !== "string" || v["createdAt"] === "" || typeof v["updatedAt"] !== "string" || v["updatedAt"] === "") return false;
  if (!optional(v["author"], "string") || !optional(v["descriptionExplicit"], "boolean")) return false;
  if (v["language"] !== undefined && v["language"] !== "python") return false;
  const prov = v["provenance"];
  if (prov !== undefined && !(isObject(prov) && (prov["trust"] === "trusted" || prov["trust"] === "untrusted") &&
    typeof prov["executor"] === "string" && typeof prov["savedAt"] === "string" && Object.keys(prov).length === 3)) return false;
  const params = v["params"];
  if (params === undefined) return true;
  return (
    Array.isArray(params) &&
    params.every(
      (p: unknown) =>
        isObject(p) &&
        typeof p["name"] === "string" &&
        typeof p["type"] === "string" &&
        typeof p["required"] === "boolean" &&
        optional(p["description"], "string") &&
        optional(p["defaultExpression"], "string"),
    )
  );
}

function looksLikeArtifactMeta(v: unknown): v is ArtifactMeta {
  return (
    isObject(v) &&
    Number.isInteger(v["createdMs"]) &&
    Number.isInteger(v["updatedMs"]) &&
    v["v"] === 1 &&
    (v["kind"] === "text" || v["kind"] === "bytes" || v["kind"] === "json") &&
    Number.isInteger(v["size"]) &&
    (v["size"] as number) >= 0 &&
    typeof v["sha256"] === "string" &&
    typeof v["description"] === "string" &&
    isObject(v["metadata"])
  );
}

export function artifactInfo(name: string, meta: ArtifactMeta): ArtifactInfo {
  return {
    name,
    kind: meta.kind,
    size: meta.size,
    description: meta.description,
    metadata: meta.metadata as Record<string, JsonValue>,
    createdAt: new Date(meta.createdMs).toISOString(),
    updatedAt: new Date(meta.updatedMs).toISOString(),
  };
}

/** Same rules and wording as FileStorage; the metadata is copied so later caller edits do not leak in. */
export function parseArtifactOptions(options: unknown): { description: string; metadata: Record<string, JsonValue> } {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new ValidationError(`Invalid artifact options: ${z.prettifyError(parsed.error)}. Accepted: { description?: string, metadata?: object }.`);
  }
  const metadata = parsed.data?.metadata ?? {};
  assertJsonObject(metadata, "Artifact metadata");
  return { description: parsed.data?.description ?? "", metadata: structuredClone(metadata) };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function corrupt(where: string, detail: string): StorageError {
  return new StorageError(`Corrupt entry in Redis at ${where} (not written by ts-code-mode, or edited by hand): ${detail}`);
}
