/**
 * The embedded response store: one SQLite file through better-sqlite3, in WAL mode so readers never
 * wait for the writer and several processes may share the file. better-sqlite3 is synchronous, so
 * every method does its work before returning and hands back an already settled promise; a failure
 * becomes a rejection, never a throw. Statements are prepared once, when the store opens.
 */
import Database from "better-sqlite3";
import type { ResponseObject } from "../api/responses.ts";
import type { ResponseStore, StoredItem, StoredResponse, StoreLimits } from "./store.ts";
import { chainTooLong, createdAtMs, expiresAtMs, storeLimits } from "./store-rules.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS responses (
  id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  response TEXT NOT NULL,
  input_item_ids TEXT NOT NULL,
  chain_item_ids TEXT NOT NULL,
  endpoint_key TEXT
);
CREATE INDEX IF NOT EXISTS responses_expires_at_ms ON responses (expires_at_ms);
CREATE TABLE IF NOT EXISTS items (
  id TEXT PRIMARY KEY,
  response_id TEXT NOT NULL,
  item TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS items_response_id ON items (response_id);
`;

/** A `responses` row as SQLite returns it (JSON columns as text). */
interface ResponseRow {
  tenant: string;
  expires_at_ms: number;
  response: string;
  input_item_ids: string;
  chain_item_ids: string;
  endpoint_key: string | null;
}

/** Runs `work` now and settles a promise with its result or its exception. */
function settle<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * Opens (creating when absent) the SQLite response store at `path` (`":memory:"` for a private,
 * unshared one). Throws when the file cannot be opened or its schema created.
 */
export function openSqliteStore(path: string, limits?: Partial<StoreLimits>): ResponseStore {
  const lim = storeLimits(limits);
  const db = new Database(path);
  try {
    db.pragma("journal_mode = WAL");
    // In WAL mode NORMAL keeps the file consistent on a crash and skips an fsync per commit; a power
    // loss may drop the last commits, which costs a client a previous_response_id, never a corrupt store.
    db.pragma("synchronous = NORMAL");
    db.exec(SCHEMA);
  } catch (err) {
    db.close();
    throw err;
  }

  const selectResponse = db.prepare<[string, string, number], ResponseRow>(
    `SELECT tenant, expires_at_ms, response, input_item_ids, chain_item_ids, endpoint_key
       FROM responses WHERE id = ? AND tenant = ? AND expires_at_ms > ?`,
  );
  // json_each yields the asked ids with their position (`key`); joining on the primary key skips
  // missing ids and ORDER BY key returns the rest in the asked order, repeats included.
  const selectItems = db.prepare<[string], { id: string; item: string }>(
    `SELECT items.id AS id, items.item AS item
       FROM json_each(?) AS asked JOIN items ON items.id = asked.value
      ORDER BY asked.key`,
  );
  const countItems = db.prepare<[string], { n: number }>(
    "SELECT count(*) AS n FROM json_each(?) AS asked JOIN items ON items.id = asked.value",
  );
  const insertResponse = db.prepare(
    `INSERT INTO responses (id, tenant, created_at_ms, expires_at_ms, response, input_item_ids, chain_item_ids, endpoint_key)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertItem = db.prepare("INSERT INTO items (id, response_id, item) VALUES (?, ?, ?)");
  const selectOwned = db.prepare<[string, string], { expires_at_ms: number }>(
    "SELECT expires_at_ms FROM responses WHERE id = ? AND tenant = ?",
  );
  const deleteResponse = db.prepare("DELETE FROM responses WHERE id = ?");
  const deleteItemsOf = db.prepare("DELETE FROM items WHERE response_id = ?");
  const deleteExpiredItems = db.prepare(
    "DELETE FROM items WHERE response_id IN (SELECT id FROM responses WHERE expires_at_ms <= ?)",
  );
  const deleteExpired = db.prepare("DELETE FROM responses WHERE expires_at_ms <= ?");

  const putTx = db.transaction((stored: StoredResponse, newItems: readonly StoredItem[]) => {
    const id = stored.response.id;
    insertResponse.run(
      id,
      stored.tenant,
      createdAtMs(stored),
      expiresAtMs(stored, lim),
      JSON.stringify(stored.response),
      JSON.stringify(stored.inputItemIds),
      JSON.stringify(stored.chainItemIds),
      stored.endpointKey ?? null,
    );
    for (const { id: itemId, item } of newItems) insertItem.run(itemId, id, JSON.stringify(item));
  });

  // A response that is present but expired is removed as well (it is garbage either way), yet
  // reported as absent, as `get` would have answered.
  const removeTx = db.transaction((id: string, tenant: string, nowMs: number): boolean => {
    const row = selectOwned.get(id, tenant);
    if (!row) return false;
    deleteItemsOf.run(id);
    deleteResponse.run(id);
    return row.expires_at_ms > nowMs;
  });

  const sweepTx = db.transaction((nowMs: number): number => {
    deleteExpiredItems.run(nowMs);
    return deleteExpired.run(nowMs).changes;
  });

  return {
    get: (id, tenant) =>
      settle(() => {
        const row = selectResponse.get(id, tenant, Date.now());
        if (!row) return undefined;
        const stored: StoredResponse = {
          response: JSON.parse(row.response) as ResponseObject,
          tenant: row.tenant,
          inputItemIds: JSON.parse(row.input_item_ids) as string[],
          chainItemIds: JSON.parse(row.chain_item_ids) as string[],
          expiresAtMs: row.expires_at_ms,
        };
        if (row.endpoint_key !== null) stored.endpointKey = row.endpoint_key;
        return stored;
      }),
    items: (ids) =>
      settle(() =>
        ids.length === 0
          ? []
          : selectItems.all(JSON.stringify(ids)).map((row) => ({ id: row.id, item: JSON.parse(row.item) })),
      ),
    countItems: (ids) => settle(() => (ids.length === 0 ? 0 : countItems.get(JSON.stringify(ids))!.n)),
    put: (stored, newItems) =>
      settle(() => {
        const refusal = chainTooLong(stored, lim);
        if (refusal) throw refusal;
        putTx(stored, newItems);
      }),
    delete: (id, tenant) => settle(() => removeTx(id, tenant, Date.now())),
    sweep: (nowMs) => settle(() => sweepTx(nowMs)),
    close: () =>
      settle(() => {
        if (db.open) db.close();
      }),
  };
}
