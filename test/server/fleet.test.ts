/**
 * Scale-out: two `serve` processes (the built CLI) on one Redis prefix (a real redis-server). A
 * workflow and an artifact saved through one server are used through the other; each session lives
 * on the server that created it (another server does not know its id).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { RemoteExecutor } from "../../src/execution/remote/executor.js";
import { Session } from "../../src/session.js";
import { RedisStorage } from "../../src/storage/redis/storage.js";
import { EXAMPLE_TOOLS_PATH } from "../conformance/executor.js";
import { deleteKeys, startRedis, uniquePrefix, type RedisServer } from "../helpers/redis.js";
import { api, ensureBuilt, startServe, TOKEN, type ServeProcess } from "./harness.js";

let redis: RedisServer;
const prefix = uniquePrefix("fleet");
const servers: ServeProcess[] = [];
const sessions: Session[] = [];
const storages: RedisStorage[] = [];

beforeAll(async () => {
  await ensureBuilt();
  redis = await startRedis();
  for (let i = 0; i < 2; i++) servers.push(await startServe(["--token", TOKEN, "--redis", redis.url, "--prefix", prefix, "--tools", EXAMPLE_TOOLS_PATH]));
}, 120_000);

afterAll(async () => {
  await Promise.all(sessions.map((s) => s.close()));
  await Promise.all(storages.map((s) => s.close()));
  await Promise.all(servers.map((s) => s.stop()));
  await deleteKeys(redis.url, prefix).catch(() => undefined);
  await redis.close();
});

function sessionOn(server: ServeProcess): Session {
  const storage = new RedisStorage({ url: redis.url, prefix });
  storages.push(storage);
  const session = new Session({ storage, executor: new RemoteExecutor({ url: server.url, token: TOKEN }) });
  sessions.push(session);
  return session;
}

it("a workflow saved through one server is invoked through the other; artifacts too", async () => {
  const [a, b] = servers as [ServeProcess, ServeProcess];
  const onA = sessionOn(a);
  const onB = sessionOn(b);
  const saved = await onA.run(
    "await workflows.create({ name: 'quadruple', source: 'export async function run({ n }: { n: number }) { return n * 4; }', description: 'Times four' }); " +
      "await artifacts.save('fleet/bytes.bin', new Uint8Array([1, 2, 3])); 'saved'",
  );
  expect(saved.error).toBeNull();
  const used = await onB.run("[await workflows.quadruple({ n: 5 }), await artifacts.load('fleet/bytes.bin')]");
  expect(used.error).toBeNull();
  expect(used.value).toEqual([20, new Uint8Array([1, 2, 3])]);
  expect((await onB.searchWorkflows("multiply by four"))[0]?.name).toBe("quadruple");
  // The facade's storage is the same Redis prefix, so the host sees what the guests saved.
  expect((await onB.getWorkflow("quadruple"))?.description).toBe("Times four");
});

it("a session lives on the server that created it: the other one answers 404 SessionLostError", async () => {
  const [a, b] = servers as [ServeProcess, ServeProcess];
  const created = await api(a.url, "POST", "/sessions", { json: {} });
  const id = (created.body as { id: string }).id;
  // What a sticky proxy learns the route from (examples/fleet/haproxy.cfg).
  expect(created.headers.get("x-session-id")).toBe(id);
  const elsewhere = await api(b.url, "POST", `/sessions/${id}/run`, { json: { code: "1" } });
  expect(elsewhere.status).toBe(404);
  expect((elsewhere.body as { error: { name: string } }).error.name).toBe("SessionLostError");
  expect((await api(a.url, "POST", `/sessions/${id}/run`, { json: { code: "1" } })).body).toMatchObject({ ok: true, value: 1 });
});
