/**
 * The throwaway-PostgreSQL helper itself: it refuses loudly when PostgreSQL is missing (so store
 * tests fail instead of skipping), and stop() really stops the server and removes its files.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import pg from "pg";
import { findPostgresBin, startPostgres } from "./postgres.ts";

test("without initdb and pg_ctl in any searched dir, the helper throws naming what to install", () => {
  const empty = mkdtempSync(join(tmpdir(), "llmd-no-pg-"));
  try {
    assert.throws(() => findPostgresBin([empty]), /PostgreSQL is not installed.*apt-get install postgresql/s);
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});

test("a started server answers queries; after stop() it refuses connections and its dir is gone", async () => {
  const server = await startPostgres();
  const client = new pg.Client({ connectionString: server.connectionString });
  await client.connect();
  const { rows } = await client.query<{ n: number }>("SELECT 1 + 1 AS n");
  assert.equal(rows[0]?.n, 2);
  await client.end();

  await server.stop();
  assert.equal(existsSync(server.dir), false);
  const late = new pg.Client({ connectionString: server.connectionString, connectionTimeoutMillis: 2000 });
  await assert.rejects(late.connect());
  await late.end().catch(() => {});
  await server.stop(); // idempotent
});
