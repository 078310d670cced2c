/**
 * A fake OpenAI API on 127.0.0.1 for end-to-end runs through the real @ai-sdk/openai provider:
 * POST /v1/responses (what `openai:<model>` calls by default in @ai-sdk/openai 3) and
 * POST /v1/chat/completions (what an OpenAI-compatible provider in project.json calls). The test
 * decides each answer from the request: which tools were offered, and the last tool output sent.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export type FakeStep = { text: string } | { tool: string; args: unknown };

export interface FakeRequest {
  path: string;
  authorization: string | undefined;
  /** Names of the tools offered. */
  tools: string[];
  /** The text of the last tool output in the request (what the model would read last). */
  lastToolOutput: string | undefined;
  body: Record<string, unknown>;
}

export interface FakeOpenAI {
  url: string;
  requests: FakeRequest[];
  close(): Promise<void>;
}

export async function startFakeOpenAI(answer: (req: FakeRequest) => FakeStep): Promise<FakeOpenAI> {
  const requests: FakeRequest[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    void readJson(req).then((body) => {
      const path = req.url ?? "";
      const chat = path.endsWith("/chat/completions");
      const tools = ((body.tools as Array<{ name?: string; function?: { name: string } }> | undefined) ?? []).map((t) => t.name ?? t.function?.name ?? "?");
      const items = (chat ? body.messages : body.input) as Array<Record<string, unknown>>;
      const outputs = items.filter((i) => (chat ? i.role === "tool" : i.type === "function_call_output")).map((i) => String(chat ? i.content : i.output));
      const request: FakeRequest = { path, authorization: req.headers.authorization, tools, lastToolOutput: outputs.at(-1), body };
      requests.push(request);
      const step = answer(request);
      const id = ++n;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(chat ? chatResponse(step, id) : responsesResponse(step, id)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
}

function responsesResponse(step: FakeStep, id: number): unknown {
  const output =
    "text" in step
      ? [{ type: "message", role: "assistant", id: `msg_${id}`, content: [{ type: "output_text", text: step.text, annotations: [] }] }]
      : [{ type: "function_call", id: `fc_${id}`, call_id: `call_${id}`, name: step.tool, arguments: JSON.stringify(step.args) }];
  return {
    id: `resp_${id}`,
    created_at: 1_700_000_000,
    model: "fake-model",
    output,
    usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 20, output_tokens_details: { reasoning_tokens: 0 } },
  };
}

function chatResponse(step: FakeStep, id: number): unknown {
  const message =
    "text" in step
      ? { role: "assistant", content: step.text }
      : { role: "assistant", content: null, tool_calls: [{ id: `call_${id}`, type: "function", function: { name: step.tool, arguments: JSON.stringify(step.args) } }] };
  return {
    id: `chatcmpl_${id}`,
    object: "chat.completion",
    created: 1_700_000_000,
    model: "fake-model",
    choices: [{ index: 0, message, finish_reason: "text" in step ? "stop" : "tool_calls" }],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  };
}
