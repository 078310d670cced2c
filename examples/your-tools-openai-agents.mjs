// Take your OpenAI Agents function tools, add code mode: the model writes code that calls them.
// Run from the repository after `npm run build`:  node examples/your-tools-openai-agents.mjs
// The model here is a scripted `Model`, so the example runs offline; leave `model` out of the
// Agent (or name one, e.g. "gpt-4.1") and the SDK's OpenAI model writes the code itself.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTracingDisabled, Usage } from "@openai/agents";

const base = mkdtempSync(path.join(tmpdir(), "ts-code-mode-your-tools-"));
process.on("exit", () => rmSync(base, { recursive: true, force: true }));
setTracingDisabled(true); // no traces sent from an offline example
const forecast = { Oslo: 4, Rome: 19 };

// Two scripted turns: code that calls the user's tool twice at once, then the answer.
const code = 'const [a, b] = await Promise.all(["Oslo", "Rome"].map((city) => tools.getWeather({ city })));\na.tempC > b.tempC ? a.city : b.city';
const turns = [
  () => [{ type: "function_call", callId: "c1", name: "run_code", arguments: JSON.stringify({ code }), status: "completed" }],
  ({ input }) => [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: `run_code said: ${input.at(-1).output.text ?? input.at(-1).output}` }] }],
];
const model = {
  async getResponse(request) {
    return { usage: new Usage(), output: turns.shift()(request) };
  },
  getStreamedResponse() {
    throw new Error("not streamed in this example");
  },
};

// --- docs: OpenAI Agents ---
import { Agent, run, tool } from "@openai/agents";
import { z } from "zod";
import { FileStorage, Session } from "ts-code-mode";
import { codeModeSystemPrompt, codeModeTools, fromAgentsTools } from "ts-code-mode/openai-agents";

// Your function tools, as they are.
const getWeather = tool({
  name: "getWeather",
  description: "Get the weather in a city",
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, tempC: forecast[city] }),
});

// Add code mode: the code the model writes calls them as tools.getWeather({ city }).
const session = new Session({ storage: new FileStorage({ basePath: base }), tools: fromAgentsTools([getWeather]) });
const agent = new Agent({
  name: "assistant",
  model,
  instructions: await codeModeSystemPrompt(session),
  tools: codeModeTools(session),
});
const result = await run(agent, "Is it warmer in Oslo or in Rome?");
console.log(result.finalOutput);
await session.close();
// --- end ---
