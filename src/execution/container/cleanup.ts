/**
 * Containers left behind: every container ContainerExecutor starts carries CONTAINER_LABEL and the
 * pid and host name of its owner. close() removes its own; when a host process dies without
 * close(), the next executor start (reapOrphans) removes those whose owner on this host is gone,
 * and `ts-code-mode containers prune` removes them by hand (all of them with --all).
 */
import os from "node:os";
import type { DockerClient } from "./engine.js";
import { CONTAINER_LABEL, OWNER_HOST_LABEL, OWNER_PID_LABEL } from "./guest.js";

export interface LabelledContainer {
  id: string;
  ownerPid: number | undefined;
  ownerHost: string | undefined;
  state: string;
}

export async function listLabelled(docker: DockerClient): Promise<LabelledContainer[]> {
  const list = await docker.listContainers({ all: true, filters: { label: [CONTAINER_LABEL] } });
  return list.map((c) => {
    const pid = Number.parseInt(c.Labels?.[OWNER_PID_LABEL] ?? "", 10);
    return { id: c.Id, ownerPid: Number.isInteger(pid) && pid > 0 ? pid : undefined, ownerHost: c.Labels?.[OWNER_HOST_LABEL], state: c.State };
  });
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

/** Remove labelled containers (orphans only, unless `all`); returns how many were removed. */
export async function pruneContainers(docker: DockerClient, options: { all?: boolean } = {}): Promise<string[]> {
  const victims = (await listLabelled(docker)).filter((c) => options.all || orphaned(c));
  const removed = await Promise.all(
    victims.map((c) =>
      docker
        .getContainer(c.id)
        .remove({ force: true, v: true })
        .then(() => c.id)
        .catch(() => null),
    ),
  );
  return removed.filter((id): id is string => id !== null);
}

export async function reapOrphans(docker: DockerClient): Promise<number> {
  return (await pruneContainers(docker)).length;
}
