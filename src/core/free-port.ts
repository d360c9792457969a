import { once } from "node:events";
import { createServer } from "node:net";

/** A TCP port nobody listens on right now on `host` (the OS's pick; another process may take it next). */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  const server = createServer();
  server.listen(0, host);
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The first of `n` consecutive ports nobody listens on right now on `host` (a random base in
 * 20000–59999 tried until one fits), for servers that offset a base port by rank, as vLLM's KV-event
 * publishers do.
 */
export async function freePortRange(n: number, host = "0.0.0.0"): Promise<number> {
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 40_000);
    let free = true;
    for (let port = base; port < base + n && free; port++) free = await isFree(port, host);
    if (free) return base;
  }
}

function isFree(port: number, host: string): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}
