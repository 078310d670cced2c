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
  const listening = await listen(app.fetch, config.host, config.port);
  return {
    url: listening.url,
    close: async () => {
      await executors.close();
      await pool.closeAll();
      await listening.close();
    },
  };
}

/** Serves `fetch` on host:port (0: a free port); `close()` stops listening and drops idle connections. */
export async function listen(fetch: Parameters<typeof serveNode>[0]["fetch"], hostname: string, port: number): Promise<RunningServer> {
  const server = await new Promise<ReturnType<typeof serveNode>>((resolve, reject) => {
    const s = serveNode({ fetch, hostname, port }, () => resolve(s));
    s.once("error", reject);
  });
  const { port: bound } = server.address() as AddressInfo;
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return {
    url: `http://${host}:${bound}`,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Idle keep-alive connections (and open event streams) would hold close() open.
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      await closed;
    },
  };
}
