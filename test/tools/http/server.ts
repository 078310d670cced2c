/**
 * A real local HTTP server for the HTTP adapter tests: listens on a free port of 127.0.0.1,
 * records every request it gets (raw URL, headers, body), and answers with the test's handler.
 * `closed` of a recorded request resolves when its connection went away, so a test can check that
 * a timed-out or aborted call really cancelled the request.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface SeenRequest {
  method: string;
  /** Raw request target, exactly as sent (percent-encoding preserved). */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Resolves when the response closed (finished, or the client went away). */
  closed: Promise<void>;
  /** True once the client went away before the response was finished. */
  aborted: () => boolean;
}

export type Handler = (req: SeenRequest, res: http.ServerResponse) => void;

export interface TestServer {
  url: string;
  port: number;
  requests: SeenRequest[];
  /** Resolves with the next request the server receives. */
  nextRequest(): Promise<SeenRequest>;
  close(): Promise<void>;
}

export async function startServer(handler: Handler): Promise<TestServer> {
  const requests: SeenRequest[] = [];
  let waiters: Array<(r: SeenRequest) => void> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const closed = new Promise<void>((resolve) => res.once("close", () => resolve()));
      const seen: SeenRequest = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        closed,
        aborted: () => !res.writableFinished,
      };
      requests.push(seen);
      const w = waiters;
      waiters = [];
      for (const f of w) f(seen);
      handler(seen, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    nextRequest: () => new Promise((resolve) => waiters.push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on (it was free a moment ago). */
export async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function json(res: http.ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body) });
  res.end(body);
}
