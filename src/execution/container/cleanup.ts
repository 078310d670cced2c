/**
 * Containers left behind: every container ContainerExecutor starts carries CONTAINER_LABEL and the
 * pid, uid and host name of its owner. close() removes its own; when a host process dies without
 * close(), the next executor start (reapOrphans) removes those whose owner on this host is gone,
 * and `ts-code-mode containers prune` removes them by hand (with --all, also this user's running
 * sessions'). One engine may serve several users (a rootful podman socket, a shared Docker daemon):
 * another user's containers, and those of other hosts, are never touched.
 */
import os from "node:os";
import { dockerClient, engineCall } from "./engine.js";
import type { DockerodeClient } from "./types.js";
import { CONTAINER_LABEL, currentUid, OWNER_HOST_LABEL, OWNER_PID_LABEL, OWNER_UID_LABEL } from "./guest.js";

export interface LabelledContainer {
  id: string;
  ownerPid: number | undefined;
  ownerHost: string | undefined;
  /** Absent on containers started by a version that did not record it. */
  ownerUid: number | undefined;
  state: string;
}

export async function listLabelled(docker?: DockerodeClient): Promise<LabelledContainer[]> {
  const client = await dockerClient(docker);
  const list = await engineCall(() => client.listContainers({ all: true, filters: { label: [CONTAINER_LABEL] } }));
  return list.map((c) => {
    const pid = Number.parseInt(c.Labels?.[OWNER_PID_LABEL] ?? "", 10);
    const uid = Number.parseInt(c.Labels?.[OWNER_UID_LABEL] ?? "", 10);
    return {
      id: c.Id,
      ownerPid: Number.isInteger(pid) && pid > 0 ? pid : undefined,
      ownerHost: c.Labels?.[OWNER_HOST_LABEL],
      ownerUid: Number.isInteger(uid) ? uid : undefined,
      state: c.State,
    };
  });
}

/** Started on this host by this user. A container without a uid label (an older version) is nobody's: only removed as an orphan. */
function mine(c: LabelledContainer): boolean {
  return c.ownerHost === os.hostname() && c.ownerUid !== undefined && c.ownerUid === currentUid();
}

/** Whether `c` belongs to another user or host, so that a prune leaves it alone. */
function foreign(c: LabelledContainer): boolean {
  return c.ownerHost !== os.hostname() || (c.ownerUid !== undefined && c.ownerUid !== currentUid());
}

/** Whether the owner of `c` is known to be gone (on this host). Containers of other hosts are left alone. */
function orphaned(c: LabelledContainer): boolean {
  if (c.ownerHost !== os.hostname() || c.ownerPid === undefined) return false;
  try {
    process.kill(c.ownerPid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

export interface PruneResult {
  /** Ids of the removed containers. */
  removed: string[];
  /** How many labelled containers were left because another user or host owns them. */
  othersKept: number;
}

/**
 * Removes this user's labelled containers whose owner process is gone (with `all`, this user's
 * running sessions' too); another user's or host's are never touched.
 */
export async function pruneContainers(docker?: DockerodeClient, options: { all?: boolean } = {}): Promise<PruneResult> {
  const client = await dockerClient(docker);
  const labelled = await listLabelled(client);
  const othersKept = labelled.filter(foreign).length;
  const victims = labelled.filter((c) => !foreign(c) && (orphaned(c) || (options.all === true && mine(c))));
  const removed = await Promise.all(
    victims.map((c) =>
      client
        .getContainer(c.id)
        .remove({ force: true, v: true })
        .then(() => c.id)
        .catch(() => null),
    ),
  );
  return { removed: removed.filter((id): id is string => id !== null), othersKept };
}

export async function reapOrphans(docker: DockerodeClient): Promise<number> {
  return (await pruneContainers(docker)).removed.length;
}
