/**
 * What the MCP client (and so the model) reads in `tools/list`. Progressive disclosure: these texts
 * teach the four namespaces and how to discover the rest, and never list the configured tools or
 * workflows themselves, so the first `tools/list` costs the same few kilobytes whether the base
 * folder holds one tool or five hundred. The model finds the rest with tools.search/describe.
 */

export const RUN_CODE_DESCRIPTION = [
  "Run TypeScript (or JavaScript) and get back the value of the last expression, console output and any error.",
  "Top-level await works; top-level const/let/function declarations persist into later run_code calls.",
  "These namespaces are in scope; every call returns a Promise:",
  '- tools: CLI commands and APIs. Find them with await tools.search("what you need") (names, callables, signatures),',
  '  read one with await tools.describe("name") (TypeScript declaration), then call await tools.<name>.<callable>({ ...args }).',
  '- workflows: saved, reusable code. await workflows.search("task") or workflows.list(), then await workflows.<name>({ ...args });',
  "  workflows.get(name) shows one's source. Save one with await workflows.create({ name, source, description }) where source exports async function run(args).",
  "- artifacts: persistent named data. await artifacts.list(), artifacts.save(name, data), artifacts.load(name).",
  "- deps: await deps.list() shows the packages code may import; deps.add(spec) installs one where allowed.",
  '- skills: know-how for tasks. await skills.search("task"), then skills.load(name) and follow its body; skills.read(name, path), skills.run(name, script, [args]).',
  "Search before guessing names. Do many calls in one snippet (loops, Promise.all) and return only what you need:",
  "output past the limit is cut, so save large results as artifacts and return slices of them.",
].join("\n");

export const DESCRIPTIONS = {
  list_tools: "List every configured tool with its callables and TypeScript signatures (call them from run_code as tools.<tool>.<callable>(args)).",
  search_tools: "Find tools by what they do, best match first. Same data as tools.search(query) in run_code.",
  describe_tool: "The full TypeScript declaration (with JSDoc) of one tool: every callable and argument. Same as tools.describe(name).",
  list_workflows: "List saved workflows with their descriptions and parameters (run them from run_code as workflows.<name>(args)).",
  search_workflows: "Find saved workflows by what they do, best match first. Same as workflows.search(query) in run_code.",
  get_workflow: "One workflow: description, parameters and TypeScript source.",
  create_workflow:
    "Save (or replace) a workflow: a TypeScript module that exports async function run({ ...params }), with tools, workflows, artifacts and deps in scope. Callable from run_code as workflows.<name>(args).",
  delete_workflow: "Delete a saved workflow by name.",
  list_artifacts: "List stored artifacts: name, kind (text, bytes, json), size, description and metadata.",
  load_artifact: "Load one artifact's data: text as text, JSON as JSON, bytes as base64 in the structured result.",
  list_deps: "List the packages the code may import. Same as deps.list() in run_code.",
  add_dep: 'Install a package the code may then import, e.g. "lodash@^4". Same as deps.add(spec) in run_code.',
  remove_dep: "Remove a package added with add_dep. Same as deps.remove(spec) in run_code.",
} as const;

/** Sent once in the initialize result; clients that show server instructions give the model this. */
export const SERVER_INSTRUCTIONS =
  "ts-code-mode runs TypeScript with tools, workflows, artifacts and deps in scope. Prefer one run_code call that does " +
  "several steps over many small tool calls; discover tools with tools.search and tools.describe inside run_code. " +
  "Workflows, artifacts and skills are also resources (workflow://{name}, artifact://{name}, skill://{name}/SKILL.md); " +
  "the prompt `skills` gives the skills catalog for a system prompt.";

/** The line added to run_code's description when the server also runs the other language (`mcp --languages typescript,python`). */
export const OTHER_LANGUAGE_LINE = {
  python: 'With language: "python", code is Python: the same namespaces, calls synchronous (tools.x.y(arg=1)), .call_async for asyncio.',
  typescript: 'With language: "typescript", code is TypeScript: the same namespaces, every call returns a Promise (await tools.x.y({ arg: 1 })).',
} as const;

/** run_code's description when the session's code is Python (`mcp --language python`). */
export const RUN_PYTHON_CODE_DESCRIPTION = [
  "Run Python and get back the value of the last expression, printed output and any exception (by its class name).",
  "Globals persist into later run_code calls; top-level await works.",
  "Four namespaces are in scope; calls are synchronous, and each has .call_async(...) for asyncio.gather:",
  '- tools: CLI commands and APIs. tools.search("what you need"), tools.describe("name"), then tools.<name>.<callable>(arg=value, ...).',
  '- workflows: saved, reusable code. workflows.search("task"), workflows.list(), workflows.get(name).',
  "- artifacts: persistent named data. artifacts.list(), artifacts.save(name, data), artifacts.load(name) (bytes stay bytes).",
  "- deps: deps.list().",
  "Search before guessing names. Do many calls in one snippet and return only what you need:",
  "output past the limit is cut, so save large results as artifacts and return slices of them.",
].join("\n");
