/**
 * A throwaway nginx for integration tests: started in the foreground (`daemon off`) with its
 * config, pid file, logs and temp paths in a temp dir, on a free loopback port, stopped by PID.
 * Needs nginx (Debian: `apt-get install nginx-light`; `.ci/run` installs it).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { freePort } from "../../src/core/free-port.ts";
import { exitOf } from "./harness.ts";

/** A running nginx. */
export interface Nginx {
  port: number;
  stop(): Promise<void>;
}

/** The nginx binary: on PATH, or Debian's /usr/sbin (not on a non-root PATH). */
function findNginx(): string {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/sbin", "/usr/local/sbin"];
  const found = dirs.map((d) => join(d, "nginx")).find((path) => existsSync(path));
  if (found) return found;
  throw new Error(
    "nginx is not installed. Install it (Debian: apt-get install nginx-light; .ci/run does this) to run this test.",
  );
}

/** Resolves once something accepts TCP connections on the loopback `port`. */
async function listening(port: number, child: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}): ${log()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = createConnection(port, "127.0.0.1");
      socket.once("connect", () => resolve(true)).once("error", () => resolve(false));
      socket.once("close", () => socket.destroy());
      setTimeout(() => socket.end(), 0);
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nginx is not listening on ${port}: ${log()}`);
}

/**
 * Starts nginx with `http` (the body of the config's `http { }` block, given the port nginx
 * listens on) and resolves once it listens.
 */
export async function startNginx(http: (port: number) => string): Promise<Nginx> {
  const bin = findNginx();
  const dir = mkdtempSync(join(tmpdir(), "llmd-nginx-"));
  for (const sub of ["body", "proxy", "fastcgi", "uwsgi", "scgi"]) mkdirSync(join(dir, sub));
  const port = await freePort();
  writeFileSync(
    join(dir, "nginx.conf"),
    `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${http(port)}
}
`,
  );
  const log = join(dir, "error.log");
  const child = spawn(bin, ["-p", dir, "-e", log, "-c", join(dir, "nginx.conf")], { stdio: "ignore" });
  await listening(port, child, () => (existsSync(log) ? readFileSync(log, "utf8") : ""));
  return {
    port,
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await exitOf(child);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
