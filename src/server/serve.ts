/** Starts the session server on a port; `close()` stops listening and closes every session. */
import { serve as serveNode } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import { createApp, type ServerConfig } from "./app.js";

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

export async function startServer(config: ServerConfig & { host: string; port: number }): Promise<RunningServer> {
  const { app, pool, executors } = createApp(config);
  const server = await new Promise<ReturnType<typeof serveNode>>((resolve, reject) => {
    const s = serveNode({ fetch: app.fetch, hostname: config.host, port: config.port }, () => resolve(s));
    s.once("error", reject);
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  return {
    url: `http://${host}:${port}`,
    close: async () => {
      await executors.close();
      await pool.closeAll();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Idle keep-alive connections would hold close() open.
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      await closed;
    },
  };
}
