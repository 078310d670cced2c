/**
 * A client that drops its POST (closes the connection) without sending `notifications/cancelled`
 * is not waiting for the answer any more: its requests are cancelled as if it had sent that
 * notification, so a run_code nobody will read stops and the session's next run does not wait on
 * it (`serve` does the same for its runs). The transport does not say which POST a message came
 * in, so each POST is tagged with a header of our own that the transport hands on with the message.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

const POST_TAG = "x-ts-code-mode-post";

export class DroppedPosts {
  /** Ids of the requests each open POST carried, by tag. */
  private readonly posts = new Map<string, Set<string | number>>();

  /** Call after the MCP server connected to `transport` (it set onmessage). */
  constructor(private readonly transport: StreamableHTTPServerTransport) {
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const tag = extra?.requestInfo?.headers[POST_TAG];
      if (typeof tag === "string" && "method" in message && "id" in message) this.posts.get(tag)?.add(message.id);
      deliver?.(message, extra);
    };
  }

  /** Tags one POST before the transport reads it; its requests are cancelled if the client drops it. */
  watch(req: IncomingMessage, res: ServerResponse): void {
    const tag = randomUUID();
    const ids = new Set<string | number>();
    this.posts.set(tag, ids);
    // The transport builds its request from the raw headers.
    req.rawHeaders.push(POST_TAG, tag);
    res.once("close", () => {
      this.posts.delete(tag);
      if (res.writableFinished) return;
      for (const requestId of ids) {
        const cancel: JSONRPCMessage = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId, reason: "the client closed its connection" } };
        this.transport.onmessage?.(cancel);
      }
    });
  }
}
