/**
 * Two routers sharing one PostgreSQL store, over the same simulators: a conversation started on one
 * continues on the other, which has never seen it (its prefix index is empty) and still sends the
 * turn to the replica holding the history, because the store records which endpoint served it. When
 * the store goes down, a turn is answered 503 `store_unavailable`, never silently lost.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI, { type APIError } from "openai";
import type { Router } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { type PostgresServer, startPostgres } from "../responses/postgres.ts";
import { MODEL, routerFor, startSims } from "./harness.ts";

describe("Responses API shared by two routers (PostgreSQL)", () => {
  let postgres: PostgresServer;
  let sims: SimServer[];
  let routers: Router[];

  before(async () => {
    postgres = await startPostgres();
    sims = await startSims(4);
    const store = await postgres.createDatabase("responses");
    routers = [];
    for (let i = 0; i < 2; i++)
      routers.push(
        await routerFor(
          sims.map((s) => s.url),
          undefined,
          { responses: { store } },
        ),
      );
  });

  after(async () => {
    for (const router of routers) await router.close();
    await Promise.all(sims.map((s) => s.close()));
    await postgres.stop();
  });

  const client = (router: Router) =>
    new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "unused", maxRetries: 0 });

  it("a chain started on one router continues on the other, on the replica that holds it", async () => {
    const context = "Shared context for the whole team. ".repeat(80);
    const [a, b] = [client(routers[0]!), client(routers[1]!)];
    const first = await a.responses
      .create({ model: MODEL, input: `${context} Start.`, max_output_tokens: 4 })
      .withResponse();
    const second = await b.responses
      .create({ model: MODEL, input: "Go on.", previous_response_id: first.data.id, max_output_tokens: 4 })
      .withResponse();
    assert.equal(
      second.response.headers.get("x-llmd-endpoint"),
      first.response.headers.get("x-llmd-endpoint"),
    );
    const usage = second.data.usage!;
    assert.ok(usage.input_tokens_details.cached_tokens > usage.input_tokens / 2, JSON.stringify(usage));
    assert.equal((await a.responses.retrieve(second.data.id)).previous_response_id, first.data.id);
  });

  it("a delete on one router reaches the other's cached chain", async () => {
    const [a, b] = [client(routers[0]!), client(routers[1]!)];
    const long = "A long aside that will be deleted. ".repeat(60);
    const r1 = await a.responses.create({ model: MODEL, input: "short start", max_output_tokens: 2 });
    const r2 = await a.responses.create({
      model: MODEL,
      input: long,
      previous_response_id: r1.id,
      max_output_tokens: 2,
    });
    const r3 = await a.responses.create({
      model: MODEL,
      input: "short",
      previous_response_id: r2.id,
      max_output_tokens: 2,
    });
    await b.responses.delete(r2.id);
    const r4 = await a.responses.create({
      model: MODEL,
      input: "short",
      previous_response_id: r3.id,
      max_output_tokens: 2,
    });
    assert.ok(r3.usage!.input_tokens > 300, `${r3.usage!.input_tokens}`);
    assert.ok(
      r4.usage!.input_tokens < 100,
      `the deleted turn was still sent: ${r4.usage!.input_tokens} tokens`,
    );
  });

  it("answers 503 store_unavailable when the store is down", async () => {
    const openai = client(routers[0]!);
    const kept = await openai.responses.create({ model: MODEL, input: "before", max_output_tokens: 2 });
    await postgres.stop();
    for (const body of [
      { model: MODEL, input: "after", max_output_tokens: 2 },
      { model: MODEL, input: "after", previous_response_id: kept.id, max_output_tokens: 2 },
    ]) {
      await assert.rejects(
        openai.responses.create(body),
        (err: APIError) => err.status === 503 && err.code === "store_unavailable",
      );
    }
    await assert.rejects(openai.responses.retrieve(kept.id), (err: APIError) => err.status === 503);
  });
});
