/**
 * The HTTP callback form of sampling (`--sample-via http://127.0.0.1:PORT/TOKEN`): a listener bound
 * to the loopback interface only, for one call, at a path with a random token (another local process
 * cannot guess it), answering `POST` of the sample request with `{"content": "..."}`. Bodies are
 * capped; the listener is closed when the call ends.
 */
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";

const MAX_BODY_BYTES = 1024 * 1024;

export interface SampleListener {
  url: string;
  close(): Promise<void>;
}

export async function startSampleListener(answer: (request: Record<string, unknown>) => Promise<{ content: string } | { refused: string }>): Promise<SampleListener> {
  const token = randomBytes(16).toString("hex");
  // node:http on first use: loading it costs every import of the package otherwise (issue 42).
  const { createServer } = await import("node:http");
  const server = createServer((req, res) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method !== "POST" || req.url !== `/${token}`) return reply(404, { error: "not found" });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reply(413, { error: "request too large" });
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return reply(400, { error: "expected a JSON sample request" });
      }
      if (typeof body !== "object" || body === null || Array.isArray(body)) return reply(400, { error: "expected a JSON object" });
      answer(body as Record<string, unknown>).then(
        (a) => ("content" in a ? reply(200, { content: a.content }) : reply(503, { error: a.refused })),
        (e: unknown) => reply(500, { error: String(e) }),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/${token}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
