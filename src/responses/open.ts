/**
 * Opens the response store a flag names: a `postgres://` or `postgresql://` URL opens the shared
 * PostgreSQL store (several routers on one database), anything else is a SQLite file path (its
 * directory is created).
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { openPostgresStore } from "./postgres-store.ts";
import { openSqliteStore } from "./sqlite-store.ts";
import type { ResponseStore, StoreLimits } from "./store.ts";

/** Default store of `llmd router` and `llmd up`: a SQLite file under the working directory. */
export const DEFAULT_STORE_PATH = ".llmd/responses.sqlite";

/** The store named by `spec` (see the module comment). */
export async function openResponseStore(spec: string, limits?: Partial<StoreLimits>): Promise<ResponseStore> {
  if (/^postgres(ql)?:\/\//.test(spec)) return openPostgresStore(spec, limits);
  mkdirSync(dirname(spec), { recursive: true });
  return openSqliteStore(spec, limits);
}
