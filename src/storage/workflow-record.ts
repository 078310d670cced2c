/**
 * The workflow record shape every store accepts and returns, checked once here so a bad record
 * fails with the same wording whichever backend holds the data.
 */
import { z } from "zod";
import { lazy } from "../lazy.js";
import { ValidationError } from "../errors.js";
import type { WorkflowRecord } from "./protocol.js";

export const paramSchema = lazy(() => z.object({
  name: z.string(),
  type: z.string(),
  description: z.string().optional(),
  required: z.boolean(),
  default: z.json().optional(),
  defaultExpression: z.string().optional(),
}));

export const provenanceSchema = lazy(() => z.strictObject({
  trust: z.enum(["trusted", "untrusted"]),
  executor: z.string(),
  savedAt: z.string(),
}));

export const workflowRecordSchema = lazy(() => z.object({
  name: z.string(),
  source: z.string(),
  description: z.string(),
  params: z.array(paramSchema).optional(),
  createdAt: z.string().min(1),
  updatedAt: z.string().min(1),
  author: z.string().optional(),
  language: z.literal("python").optional(),
  descriptionExplicit: z.boolean().optional(),
  provenance: provenanceSchema.optional(),
}));

const LONE_SURROGATE = /[\ud800-\udfff]/u;

/** A validated copy of `record` with only the known fields, in a fixed order. */
export function checkWorkflowRecord(name: string, record: unknown): WorkflowRecord {
  const parsed = workflowRecordSchema.safeParse(record);
  if (!parsed.success) throw new ValidationError(`Invalid workflow record "${name}": ${z.prettifyError(parsed.error)}`);
  const r = parsed.data;
  if (LONE_SURROGATE.test(r.source)) {
    throw new ValidationError(`Workflow "${name}" source contains an unpaired surrogate, which UTF-8 cannot store.`);
  }
  return {
    name: r.name,
    source: r.source,
    description: r.description,
    ...(r.params !== undefined ? { params: r.params } : {}),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    ...(r.author !== undefined ? { author: r.author } : {}),
    ...(r.language !== undefined ? { language: r.language } : {}),
    ...(r.descriptionExplicit !== undefined ? { descriptionExplicit: r.descriptionExplicit } : {}),
    ...(r.provenance !== undefined ? { provenance: { trust: r.provenance.trust, executor: r.provenance.executor, savedAt: r.provenance.savedAt } } : {}),
  };
}
