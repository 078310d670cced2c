/**
 * The container functions the package's main entry exports, each loading the container code on its
 * first call (issue 42, cold start: importing the package loads no image builder, engine client or
 * tar writer). Same names, signatures and behaviour as image.ts's and cleanup.ts's.
 */
import type { PruneResult } from "./cleanup.js";
import type { BuiltImage, ImageBuildOptions } from "./image.js";
import type { DockerodeClient } from "./types.js";

export { defaultImageTag } from "./image-tag.js";

/** Build the image unless it exists (under a lock, so parallel callers build it once). */
export async function buildImage(options: ImageBuildOptions = {}): Promise<BuiltImage> {
  return (await import("./image.js")).buildImage(options);
}

/**
 * Removes this user's labelled containers whose owner process is gone (with `all`, this user's
 * running sessions' too); another user's or host's are never touched.
 */
export async function pruneContainers(docker?: DockerodeClient, options: { all?: boolean } = {}): Promise<PruneResult> {
  return (await import("./cleanup.js")).pruneContainers(docker, options);
}
