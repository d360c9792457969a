/**
 * The ResponseStore contract, run against every implementation on real storage: the SQLite store on
 * a temp file and the PostgreSQL store on a throwaway server (test/responses/postgres.ts; a missing
 * PostgreSQL fails the suite). Each case gets a fresh file or database.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { LlmdError } from "../../src/api/errors.ts";
import type { ResponseItem, ResponseObject } from "../../src/api/responses.ts";
import { openPostgresStore } from "../../src/responses/postgres-store.ts";
import { openSqliteStore } from "../../src/responses/sqlite-store.ts";
import type { ResponseStore, StoredItem, StoredResponse, StoreLimits } from "../../src/responses/store.ts";
import { type PostgresServer, startPostgres } from "./postgres.ts";

/** One fresh backing database; `open` may be called more than once to get several stores on it. */
interface Backing {
  open(limits?: Partial<StoreLimits>): Promise<ResponseStore>;
}

interface Backend {
  name: string;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  fresh(): Promise<Backing>;
}

const HOUR = 3600_000;

function responseObject(
  id: string,
  previous: string | null,
  text: string,
  createdAtMs: number,
): ResponseObject {
  return {
    id,
    object: "response",
    created_at: Math.floor(createdAtMs / 1000),
    status: "completed",
    model: "m",
    output: [
      {
        type: "message",
        id: `${id}_out`,
        role: "assistant",
        content: [{ type: "output_text", text, annotations: [] }],
        status: "completed",
      },
    ],
    instructions: null,
    previous_response_id: previous,
    max_output_tokens: null,
    temperature: null,
    tools: [],
    metadata: { turn: id },
    store: true,
    usage: {
      input_tokens: 3,
      input_tokens_details: { cached_tokens: 1 },
      output_tokens: 2,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 5,
    },
    incomplete_details: null,
    error: null,
  };
}

interface Turn {
  stored: StoredResponse;
  newItems: StoredItem[];
}

/** A turn continuing `previous` (or starting a chain): one input item, one output item. */
function turn(
  id: string,
  previous: StoredResponse | undefined,
  opts: { tenant?: string; createdAtMs?: number; expiresAtMs?: number; endpointKey?: string } = {},
): Turn {
  const createdAtMs = opts.createdAtMs ?? Date.now();
  const response = responseObject(id, previous?.response.id ?? null, `answer ${id} "quoted" ü`, createdAtMs);
  const input: ResponseItem = {
    type: "message",
    role: "user",
    content: [{ type: "input_text", text: `ask ${id}` }],
  };
  const newItems: StoredItem[] = [
    { id: `${id}_in`, item: input },
    { id: `${id}_out`, item: response.output[0]! },
  ];
  const stored: StoredResponse = {
    response,
    tenant: opts.tenant ?? "",
    inputItemIds: [`${id}_in`],
    chainItemIds: [...(previous?.chainItemIds ?? []), `${id}_in`, `${id}_out`],
    expiresAtMs: opts.expiresAtMs ?? createdAtMs + HOUR,
  };
  if (opts.endpointKey !== undefined) stored.endpointKey = opts.endpointKey;
  return { stored, newItems };
}

const put = (store: ResponseStore, t: Turn) => store.put(t.stored, t.newItems);

function sqliteBackend(): Backend {
  let dir = "";
  let n = 0;
  return {
    name: "SQLite",
    async setup() {
      dir = mkdtempSync(join(tmpdir(), "llmd-sqlite-store-"));
    },
    async teardown() {
      rmSync(dir, { recursive: true, force: true });
    },
    async fresh() {
      const file = join(dir, `store-${++n}.db`);
      return { open: async (limits) => openSqliteStore(file, limits) };
    },
  };
}

function postgresBackend(): Backend {
  let server: PostgresServer | undefined;
  let n = 0;
  return {
    name: "PostgreSQL",
    async setup() {
      server = await startPostgres();
    },
    async teardown() {
      await server?.stop();
    },
    async fresh() {
      if (!server) throw new Error("PostgreSQL server not started");
      const url = await server.createDatabase(`store_${++n}`);
      return { open: (limits) => openPostgresStore(url, limits) };
    },
  };
}

for (const backend of [sqliteBackend(), postgresBackend()]) {
  describe(`ResponseStore contract: ${backend.name}`, () => {
    const opened: ResponseStore[] = [];
    /** A store on a fresh database (closed after the suite), plus the backing to open more. */
    const fresh = async (limits?: Partial<StoreLimits>) => {
      const backing = await backend.fresh();
      const open = async (l = limits) => {
        const store = await backing.open(l);
        opened.push(store);
        return store;
      };
      return { store: await open(), open };
    };

    before(() => backend.setup());
    after(async () => {
      for (const store of opened) await store.close();
      await backend.teardown();
    });

    test("put then get returns the stored response; items come in the asked order, missing ids skipped", async () => {
      const { store } = await fresh();
      const a = turn("resp_a", undefined, { endpointKey: "default/pod-1" });
      const b = turn("resp_b", a.stored);
      await put(store, a);
      await put(store, b);

      assert.deepEqual(await store.get("resp_a", ""), a.stored);
      // No endpoint key stored: the property is absent, not undefined.
      assert.deepEqual(await store.get("resp_b", ""), b.stored);
      assert.equal(await store.get("resp_unknown", ""), undefined);

      const all = [...a.newItems, ...b.newItems];
      assert.deepEqual(await store.items(b.stored.chainItemIds), all);
      assert.deepEqual(await store.items(["resp_b_out", "nope", "resp_a_in", "resp_b_out"]), [
        all[3],
        all[0],
        all[3],
      ]);
      assert.deepEqual(await store.items([]), []);

      // A response that introduced no items is still stored.
      const bare = turn("resp_bare", b.stored);
      await store.put(bare.stored, []);
      assert.deepEqual(await store.get("resp_bare", ""), bare.stored);
    });

    test("any string JSON can carry round-trips: NUL, a lone surrogate, astral characters", async () => {
      const { store } = await fresh();
      const t = turn("resp_odd", undefined);
      const text = 'nul:\u0000 lone:\ud800 pair:\ud83d\ude00 quote:" backslash:\\';
      t.newItems[0]!.item = { type: "message", role: "user", content: text };
      t.stored.response.metadata = { note: text };
      await put(store, t);
      assert.deepEqual(await store.get("resp_odd", ""), t.stored);
      assert.deepEqual(await store.items(t.stored.chainItemIds), t.newItems);
    });

    test("another tenant's response reads as absent and cannot be deleted", async () => {
      const { store } = await fresh();
      const t = turn("resp_t", undefined, { tenant: "team-a" });
      await put(store, t);

      assert.equal(await store.get("resp_t", "team-b"), undefined);
      assert.equal(await store.get("resp_t", ""), undefined);
      assert.equal(await store.delete("resp_t", "team-b"), false);
      assert.deepEqual(await store.get("resp_t", "team-a"), t.stored);
      assert.equal((await store.items(t.stored.chainItemIds)).length, 2);

      assert.equal(await store.delete("resp_t", "team-a"), true);
      assert.equal(await store.get("resp_t", "team-a"), undefined);
      assert.equal(await store.delete("resp_t", "team-a"), false);
    });

    test("a chain of 100 responses rehydrates in order from one lookup and one items() call", async () => {
      const { store } = await fresh();
      let last: StoredResponse | undefined;
      const expected: StoredItem[] = [];
      for (let i = 0; i < 100; i++) {
        const t = turn(`resp_${i}`, last);
        await put(store, t);
        expected.push(...t.newItems);
        last = t.stored;
      }
      const head = await store.get("resp_99", "");
      assert.ok(head);
      assert.equal(head.chainItemIds.length, 200);
      const items = await store.items(head.chainItemIds);
      assert.deepEqual(items, expected);
    });

    test("delete removes the response and the items it introduced; later chains rehydrate without them", async () => {
      const { store } = await fresh();
      const r1 = turn("resp_1", undefined);
      const r2 = turn("resp_2", r1.stored);
      const r3 = turn("resp_3", r2.stored);
      for (const t of [r1, r2, r3]) await put(store, t);

      assert.equal(await store.delete("resp_2", ""), true);
      assert.equal(await store.get("resp_2", ""), undefined);
      const head = await store.get("resp_3", "");
      assert.ok(head);
      assert.deepEqual(await store.items(head.chainItemIds), [...r1.newItems, ...r3.newItems]);
      assert.deepEqual(await store.items(["resp_2_in", "resp_2_out"]), []);
      // countItems sees the same: the chain lost the deleted response's items.
      const all = [...r1.newItems, ...r2.newItems, ...r3.newItems].map((i) => i.id);
      assert.equal(await store.countItems(head.chainItemIds), r1.newItems.length + r3.newItems.length);
      assert.equal(await store.countItems(all), all.length - r2.newItems.length);
      assert.equal(await store.countItems([]), 0);
    });

    test("expired responses read as absent; sweep deletes them and their items", async () => {
      const now = Date.now();
      const { store } = await fresh({ ttlMs: 10 * 60_000 });
      const live = turn("resp_live", undefined, { createdAtMs: now, expiresAtMs: now + HOUR });
      const expired = turn("resp_expired", undefined, { createdAtMs: now - HOUR, expiresAtMs: now - 1 });
      // Asks for a day, but the store's ttl (10 min) bounds it: created 11 min ago, so expired.
      const pastTtl = turn("resp_past_ttl", undefined, {
        createdAtMs: now - 11 * 60_000,
        expiresAtMs: now + 24 * HOUR,
      });
      const doomed = turn("resp_doomed", undefined, { createdAtMs: now - HOUR, expiresAtMs: now - 1 });
      for (const t of [live, expired, pastTtl, doomed]) await put(store, t);

      const got = await store.get("resp_live", "");
      assert.ok(got);
      // The live one's own expiry is later than created + ttl, so the ttl is what it keeps.
      assert.equal(got.expiresAtMs, Math.floor(live.stored.response.created_at * 1000 + 10 * 60_000));
      assert.equal(await store.get("resp_expired", ""), undefined);
      assert.equal(await store.get("resp_past_ttl", ""), undefined);
      // Deleting an expired response answers "absent", as get does, and removes it.
      assert.equal(await store.delete("resp_doomed", ""), false);

      assert.equal(await store.sweep(Date.now()), 2);
      assert.deepEqual(
        await store.items([...expired.stored.chainItemIds, ...pastTtl.stored.chainItemIds, "resp_doomed_in"]),
        [],
      );
      assert.deepEqual(await store.items(live.stored.chainItemIds), live.newItems);
      assert.equal(await store.sweep(Date.now()), 0);

      assert.equal(await store.sweep(now + 11 * 60_000), 1);
      assert.equal(await store.get("resp_live", ""), undefined);
      assert.deepEqual(await store.items(live.stored.chainItemIds), []);
    });

    test("a chain longer than maxChainItems is refused with a 400 and nothing is stored", async () => {
      const { store } = await fresh({ maxChainItems: 4 });
      const r1 = turn("resp_1", undefined);
      const r2 = turn("resp_2", r1.stored);
      const r3 = turn("resp_3", r2.stored);
      await put(store, r1);
      await put(store, r2); // exactly 4 items: allowed
      // One item over: r3 with its input only (5 items).
      const over: Turn = {
        stored: { ...r3.stored, chainItemIds: r3.stored.chainItemIds.slice(0, 5) },
        newItems: r3.newItems.slice(0, 1),
      };

      for (const refused of [over, r3]) {
        await assert.rejects(put(store, refused), (err: unknown) => {
          assert.ok(err instanceof LlmdError);
          assert.equal(err.status, 400);
          assert.equal(err.param, "previous_response_id");
          return true;
        });
      }
      assert.equal(await store.get("resp_3", ""), undefined);
      assert.deepEqual(await store.items(["resp_3_in", "resp_3_out"]), []);
      assert.ok(await store.get("resp_2", ""));
    });

    test("a put that fails half-way stores nothing (one transaction)", async () => {
      const { store } = await fresh();
      const r1 = turn("resp_1", undefined);
      await put(store, r1);
      const r2 = turn("resp_2", r1.stored);
      // Its second item reuses an existing item id, so the item insert fails after the response row.
      await assert.rejects(store.put(r2.stored, [r2.newItems[0]!, r1.newItems[0]!]));
      assert.equal(await store.get("resp_2", ""), undefined);
      assert.deepEqual(await store.items(["resp_2_in"]), []);
      // The existing item is untouched.
      assert.deepEqual(await store.items(["resp_1_in"]), [r1.newItems[0]]);
    });

    test("two stores opened on one database see each other's writes and deletes", async () => {
      const { store: a, open } = await fresh();
      const b = await open();
      const r1 = turn("resp_1", undefined, { tenant: "t", endpointKey: "ns/pod-0" });
      await put(a, r1);
      assert.deepEqual(await b.get("resp_1", "t"), r1.stored);
      const r2 = turn("resp_2", r1.stored, { tenant: "t" });
      await put(b, r2);
      const head = await a.get("resp_2", "t");
      assert.ok(head);
      assert.deepEqual(await a.items(head.chainItemIds), [...r1.newItems, ...r2.newItems]);

      assert.equal(await b.delete("resp_1", "t"), true);
      assert.equal(await a.get("resp_1", "t"), undefined);
      assert.deepEqual(await a.items(head.chainItemIds), r2.newItems);
    });

    test("responses survive closing the store and opening it again", async () => {
      const { store, open } = await fresh();
      const r1 = turn("resp_1", undefined, { tenant: "t" });
      const r2 = turn("resp_2", r1.stored, { tenant: "t" });
      await put(store, r1);
      await put(store, r2);
      await store.close();

      const reopened = await open();
      assert.deepEqual(await reopened.get("resp_2", "t"), r2.stored);
      assert.deepEqual(await reopened.items(r2.stored.chainItemIds), [...r1.newItems, ...r2.newItems]);
    });
  });
}
