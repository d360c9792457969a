/**
 * The shared response store: PostgreSQL through a `pg` Pool, so several router replicas pointed at
 * one database see each other's responses (a chain may continue on any replica). Same schema as the
 * SQLite store, its JSON columns of type `json` (see SCHEMA for why not jsonb). Every query is named,
 * so each pooled connection prepares it once.
 * Each write is one statement (data-modifying CTEs), which PostgreSQL runs as one transaction: a
 * response and its items land, or go, together.
 */
import pg from "pg";
import type { ResponseObject } from "../api/responses.ts";
import type { ResponseStore, StoredItem, StoredResponse, StoreLimits } from "./store.ts";
import { chainTooLong, createdAtMs, expiresAtMs, storeLimits } from "./store-rules.ts";

// JSON columns are `json`, not `jsonb`: jsonb refuses strings a client may legitimately send (a NUL
// character, `\u0000`, or a lone UTF-16 surrogate, both of which JSON.stringify writes as escapes),
// which would fail the turn. json keeps the text exactly as written (key order included), and the
// store never queries inside these documents, so jsonb's indexing buys nothing here.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS responses (
  id text PRIMARY KEY,
  tenant text NOT NULL,
  created_at_ms bigint NOT NULL,
  expires_at_ms bigint NOT NULL,
  response json NOT NULL,
  input_item_ids json NOT NULL,
  chain_item_ids json NOT NULL,
  endpoint_key text
);
CREATE INDEX IF NOT EXISTS responses_expires_at_ms ON responses (expires_at_ms);
CREATE TABLE IF NOT EXISTS items (
  id text PRIMARY KEY,
  response_id text NOT NULL,
  item json NOT NULL
);
CREATE INDEX IF NOT EXISTS items_response_id ON items (response_id);
`;

/**
 * Advisory lock key serialising schema creation: replicas starting together would otherwise race
 * in `CREATE TABLE IF NOT EXISTS` (it is not atomic against a concurrent creator of the same name).
 */
const SCHEMA_LOCK = 0x6c6c6d64; // "llmd"

const GET = `SELECT tenant, expires_at_ms, response, input_item_ids, chain_item_ids, endpoint_key
  FROM responses WHERE id = $1 AND tenant = $2 AND expires_at_ms > $3`;

const ITEMS = "SELECT id, item FROM items WHERE id = ANY($1::text[])";

const COUNT_ITEMS = "SELECT count(*)::int AS n FROM items WHERE id = ANY($1::text[])";

// The response row, then its items from two parallel arrays (ids, items as JSON text); one statement,
// one round trip. Not json_to_recordset: it decodes strings inside the documents and so refuses a NUL.
const PUT = `WITH r AS (
    INSERT INTO responses (id, tenant, created_at_ms, expires_at_ms, response, input_item_ids, chain_item_ids, endpoint_key)
    VALUES ($1, $2, $3, $4, $5::json, $6::json, $7::json, $8)
    RETURNING id)
  INSERT INTO items (id, response_id, item)
  SELECT x.id, r.id, x.item FROM r, unnest($9::text[], $10::json[]) AS x(id, item)`;

const DELETE = `WITH gone AS (
    DELETE FROM responses WHERE id = $1 AND tenant = $2 RETURNING id, expires_at_ms),
  dropped AS (DELETE FROM items WHERE response_id IN (SELECT id FROM gone))
  SELECT expires_at_ms FROM gone`;

const SWEEP = `WITH gone AS (
    DELETE FROM responses WHERE expires_at_ms <= $1 RETURNING id),
  dropped AS (DELETE FROM items WHERE response_id IN (SELECT id FROM gone))
  SELECT count(*)::int AS n FROM gone`;

/** A `responses` row as pg returns it: json parsed, bigint as a decimal string. */
interface ResponseRow {
  tenant: string;
  expires_at_ms: string;
  response: ResponseObject;
  input_item_ids: string[];
  chain_item_ids: string[];
  endpoint_key: string | null;
}

/**
 * Opens the PostgreSQL response store at `connectionString` (a `postgres://` URL or libpq keyword
 * string), creating its tables when absent. Rejects when the server cannot be reached.
 */
export async function openPostgresStore(
  connectionString: string,
  limits?: Partial<StoreLimits>,
): Promise<ResponseStore> {
  const lim = storeLimits(limits);
  const pool = new pg.Pool({ connectionString });
  // An idle pooled connection that breaks (server restart, network) is reported here; the pool
  // already dropped it and the next query opens a new one, so there is nothing to do, but without a
  // listener the event would crash the process.
  pool.on("error", () => {});

  try {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SELECT pg_advisory_xact_lock($1)", [SCHEMA_LOCK]);
      await client.query(SCHEMA);
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  } catch (err) {
    await pool.end();
    throw err;
  }

  return {
    async get(id, tenant) {
      const { rows } = await pool.query<ResponseRow>({
        name: "llmd_responses_get",
        text: GET,
        values: [id, tenant, Date.now()],
      });
      const row = rows[0];
      if (!row) return undefined;
      const stored: StoredResponse = {
        response: row.response,
        tenant: row.tenant,
        inputItemIds: row.input_item_ids,
        chainItemIds: row.chain_item_ids,
        expiresAtMs: Number(row.expires_at_ms),
      };
      if (row.endpoint_key !== null) stored.endpointKey = row.endpoint_key;
      return stored;
    },

    async items(ids) {
      if (ids.length === 0) return [];
      const { rows } = await pool.query<StoredItem>({
        name: "llmd_responses_items",
        text: ITEMS,
        values: [ids],
      });
      // The rows come in no particular order; put them back in the asked one (linear, unlike
      // ORDER BY array_position, which scans the array once per row).
      const byId = new Map(rows.map((row) => [row.id, row]));
      const out: StoredItem[] = [];
      for (const id of ids) {
        const row = byId.get(id);
        if (row) out.push({ id: row.id, item: row.item });
      }
      return out;
    },

    async countItems(ids) {
      if (ids.length === 0) return 0;
      const { rows } = await pool.query<{ n: number }>({
        name: "llmd_responses_count_items",
        text: COUNT_ITEMS,
        values: [ids],
      });
      return rows[0]!.n;
    },

    async put(stored, newItems) {
      const refusal = chainTooLong(stored, lim);
      if (refusal) throw refusal;
      await pool.query({
        name: "llmd_responses_put",
        text: PUT,
        // json parameters go as JSON text: pg would send a JS array as a PostgreSQL array literal.
        values: [
          stored.response.id,
          stored.tenant,
          createdAtMs(stored),
          expiresAtMs(stored, lim),
          JSON.stringify(stored.response),
          JSON.stringify(stored.inputItemIds),
          JSON.stringify(stored.chainItemIds),
          stored.endpointKey ?? null,
          newItems.map(({ id }) => id),
          newItems.map(({ item }) => JSON.stringify(item)),
        ],
      });
    },

    async delete(id, tenant) {
      const { rows } = await pool.query<{ expires_at_ms: string }>({
        name: "llmd_responses_delete",
        text: DELETE,
        values: [id, tenant],
      });
      // An expired response is removed too (it is garbage), yet reported as absent, as `get` reads it.
      const row = rows[0];
      return row !== undefined && Number(row.expires_at_ms) > Date.now();
    },

    async sweep(nowMs) {
      const { rows } = await pool.query<{ n: number }>({
        name: "llmd_responses_sweep",
        text: SWEEP,
        values: [Math.floor(nowMs)],
      });
      return rows[0]?.n ?? 0;
    },

    async close() {
      if (!pool.ended) await pool.end();
    },
  };
}
