/**
 * A throwaway PostgreSQL server for tests: a fresh cluster in a temp dir (`initdb -A trust`), started
 * on a free loopback port with its socket in that dir, stopped with `pg_ctl stop -m immediate` and
 * deleted. When the tests run as root the cluster belongs to user `postgres` (PostgreSQL refuses to
 * run as root). Without PostgreSQL installed it throws, naming what to install: a store test that
 * cannot reach a server must fail, not pass by skipping.
 */
import { execFile, execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { freePort } from "../../src/core/free-port.ts";

const run = promisify(execFile);

/** A running server; `stop` is idempotent. */
export interface PostgresServer {
  /** `postgresql://postgres@127.0.0.1:<port>/postgres`. */
  connectionString: string;
  /** The temp dir holding the cluster, its log and its socket; stop() removes it. */
  dir: string;
  /** A new empty database on this server, as a connection string. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

/** Debian's `/usr/lib/postgresql/<version>/bin`, newest version first; then each PATH entry. */
function binDirs(): string[] {
  const debian = "/usr/lib/postgresql";
  const versions = existsSync(debian)
    ? readdirSync(debian)
        .filter((v) => /^\d+(\.\d+)?$/.test(v))
        .sort((a, b) => Number(b) - Number(a))
        .map((v) => join(debian, v, "bin"))
    : [];
  return [...versions, ...(process.env.PATH ?? "").split(delimiter).filter(Boolean)];
}

/** The first of `dirs` holding both initdb and pg_ctl (one version's pair), or a clear error. */
export function findPostgresBin(dirs: readonly string[] = binDirs()): string {
  const dir = dirs.find((d) => existsSync(join(d, "initdb")) && existsSync(join(d, "pg_ctl")));
  if (dir) return dir;
  throw new Error(
    "PostgreSQL is not installed: no initdb and pg_ctl in /usr/lib/postgresql/*/bin or on PATH. " +
      "Install it (Debian: apt-get install postgresql; .ci/run does this) to run the PostgreSQL store tests.",
  );
}

/** uid and gid of user `postgres`, which must own the cluster when we are root. */
function postgresUser(): { uid: number; gid: number } {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith("postgres:"));
  const fields = line?.split(":");
  if (!fields || fields.length < 4)
    throw new Error("running as root, but there is no user 'postgres' to own the test cluster");
  return { uid: Number(fields[2]), gid: Number(fields[3]) };
}

/** Runs `command args` as the cluster's owner: `postgres` via runuser when root, else ourselves. */
function asOwner(asRoot: boolean, command: string, args: string[]): [string, string[]] {
  return asRoot ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args];
}

/** Starts a fresh server; throws (with the server log) when it cannot. */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = findPostgresBin();
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), "llmd-pg-"));
  if (asRoot) {
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
  }
  const data = join(dir, "data");
  const log = join(dir, "server.log");
  const pgCtl = join(bin, "pg_ctl");
  const exec = (command: string, args: string[]) => run(...asOwner(asRoot, command, args));

  let stopped = false;
  const stopSync = () => {
    // The test process is exiting without stop(): do not leave a server running on a shared machine.
    try {
      execFileSync(...asOwner(asRoot, pgCtl, ["stop", "-D", data, "-m", "immediate", "-w"]), {
        stdio: "ignore",
      });
    } catch {}
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", stopSync);

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.removeListener("exit", stopSync);
    try {
      await exec(pgCtl, ["stop", "-D", data, "-m", "immediate", "-w"]);
    } catch {
      // Not running (it failed to start); removing the dir is all that is left.
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    // --no-sync: a throwaway cluster need not survive a power cut; C locale: no dependency on
    // which locales the machine has generated.
    await exec(join(bin, "initdb"), [
      "-D",
      data,
      "-A",
      "trust",
      "-U",
      "postgres",
      "--no-sync",
      "--encoding=UTF8",
      "--locale=C",
    ]);
    const port = await freePort();
    const options = [
      `-p ${port}`,
      `-k ${dir}`,
      "-c listen_addresses=127.0.0.1",
      "-c fsync=off",
      "-c synchronous_commit=off",
      "-c full_page_writes=off",
    ].join(" ");
    try {
      await exec(pgCtl, ["start", "-D", data, "-l", log, "-w", "-t", "60", "-o", options]);
    } catch (err) {
      const serverLog = existsSync(log) ? readFileSync(log, "utf8") : "(no log)";
      throw new Error(`pg_ctl start failed: ${(err as Error).message}\n${serverLog}`);
    }
    const connectionString = `postgresql://postgres@127.0.0.1:${port}/postgres`;
    await untilAccepting(connectionString);
    return {
      connectionString,
      dir,
      async createDatabase(name) {
        if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
        const client = new pg.Client({ connectionString });
        await client.connect();
        try {
          await client.query(`CREATE DATABASE ${name}`);
        } finally {
          await client.end();
        }
        return `postgresql://postgres@127.0.0.1:${port}/${name}`;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Resolves once a client can connect and query, or throws after 30 s. */
async function untilAccepting(connectionString: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = new pg.Client({ connectionString });
    try {
      await client.connect();
      await client.query("SELECT 1");
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`PostgreSQL did not accept connections: ${err}`);
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      await client.end().catch(() => {});
    }
  }
}
