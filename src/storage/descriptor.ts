/**
 * Rebuilding a backend from its JSON descriptor. Out-of-process executors receive
 * `storage.toDescriptor()` and call this to reach the same data; the descriptor is validated here
 * because it crosses a process (or container) boundary.
 */
import { z } from "zod";
import { lazy } from "../lazy.js";
import { ValidationError } from "../errors.js";
import { FileStorage } from "./file/storage.js";
import type { StorageBackend, StorageDescriptor } from "./protocol.js";
import { RedisStorage } from "./redis/storage.js";

const descriptorSchema = lazy(() => z.discriminatedUnion("type", [
  z.object({ type: z.literal("file"), basePath: z.string().min(1), workspaceId: z.string().optional() }),
  z.object({ type: z.literal("redis"), url: z.string().min(1), prefix: z.string(), workspaceId: z.string().optional() }),
]));

/** Checks that `value` is a storage descriptor; throws ValidationError saying what is wrong. */
export function parseStorageDescriptor(value: unknown): StorageDescriptor {
  const parsed = descriptorSchema.safeParse(value);
  if (!parsed.success) {
    throw new ValidationError(
      `Invalid storage descriptor: ${z.prettifyError(parsed.error)}. Expected { type: "file", basePath, workspaceId? } ` +
        `or { type: "redis", url, prefix, workspaceId? }.`,
    );
  }
  const d = parsed.data;
  if (d.type === "file") {
    return d.workspaceId === undefined ? { type: "file", basePath: d.basePath } : { type: "file", basePath: d.basePath, workspaceId: d.workspaceId };
  }
  return d.workspaceId === undefined
    ? { type: "redis", url: d.url, prefix: d.prefix }
    : { type: "redis", url: d.url, prefix: d.prefix, workspaceId: d.workspaceId };
}

/**
 * A backend equivalent to the one that produced `descriptor`. Async because some backends must
 * load a client library or connect before they are usable.
 */
export async function storageFromDescriptor(descriptor: StorageDescriptor | unknown): Promise<StorageBackend> {
  const d = parseStorageDescriptor(descriptor);
  switch (d.type) {
    case "file":
      return new FileStorage(d.workspaceId === undefined ? { basePath: d.basePath } : { basePath: d.basePath, workspaceId: d.workspaceId });
    case "redis":
      return new RedisStorage(
        d.workspaceId === undefined ? { url: d.url, prefix: d.prefix } : { url: d.url, prefix: d.prefix, workspaceId: d.workspaceId },
      );
  }
}
