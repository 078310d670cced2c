/**
 * Artifact size quotas, the same for every backend: one artifact may hold at most
 * `maxArtifactBytes`, a store (one workspace) at most `maxStoreBytes` in total. An artifact's size
 * for both is its payload plus its description and metadata (what a save asks the store to keep).
 * A save over either limit fails with StorageError code "QUOTA_EXCEEDED" and writes nothing.
 */
import { z } from "zod";
import { lazy } from "../lazy.js";
import { StorageError } from "../errors.js";

export const MIB = 1024 * 1024;
/** Default per-artifact limit: 64 MiB. */
export const DEFAULT_MAX_ARTIFACT_BYTES = 64 * MIB;
/** Default per-store (per-workspace) limit: 1 GiB. */
export const DEFAULT_MAX_STORE_BYTES = 1024 * MIB;

export interface QuotaOptions {
  /** Largest artifact, in bytes (payload + description + metadata). Default 64 MiB. */
  maxArtifactBytes?: number;
  /** Largest total of all artifacts of the store (workspace), in bytes. Default 1 GiB. */
  maxStoreBytes?: number;
}

export interface Quota {
  maxArtifactBytes: number;
  maxStoreBytes: number;
}

export const quotaOptionSchema = lazy(() => z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional());

export function resolveQuota(options: QuotaOptions): Quota {
  return {
    maxArtifactBytes: options.maxArtifactBytes ?? DEFAULT_MAX_ARTIFACT_BYTES,
    maxStoreBytes: options.maxStoreBytes ?? DEFAULT_MAX_STORE_BYTES,
  };
}

/** Size of an artifact as the quotas count it. `metadataJson` is the metadata as JSON text. */
export function quotaSize(payloadBytes: number, description: string, metadataJson: string): number {
  return payloadBytes + Buffer.byteLength(description, "utf8") + Buffer.byteLength(metadataJson, "utf8");
}

export function artifactTooLarge(name: string, size: number, limit: number): StorageError {
  return new StorageError(
    `Cannot save artifact "${name}": it is ${formatBytes(size)} (payload, description and metadata), over the ` +
      `per-artifact quota of ${formatBytes(limit)} (maxArtifactBytes). Nothing was written.`,
    { code: "QUOTA_EXCEEDED", limit, size },
  );
}

export function storeFull(name: string, size: number, used: number, limit: number): StorageError {
  return new StorageError(
    `Cannot save artifact "${name}": the store would hold ${formatBytes(used + size)}, over its quota of ` +
      `${formatBytes(limit)} (maxStoreBytes; ${formatBytes(used)} used by other artifacts). Delete artifacts or raise the quota. ` +
      "Nothing was written.",
    { code: "QUOTA_EXCEEDED", limit, size: used + size },
  );
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v >= 10 ? v.toFixed(0) : v.toFixed(1)} ${units[i]} (${n} bytes)`;
}
