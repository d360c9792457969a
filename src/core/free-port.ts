import { createServer } from "node:net";

/** A TCP port nobody listens on right now on `host` (the OS's pick; another process may take it next). */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  const port = await bindAndClose(0, host);
  if (port === null) throw new Error(`no free port on ${host}`);
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
    for (let port = base; port < base + n && free; port++) free = (await bindAndClose(port, host)) !== null;
    if (free) return base;
  }
}

/** Binds `port` on `host` (0: the OS picks) and closes it again: the port bound, or null when it was taken. */
function bindAndClose(port: number, host: string): Promise<number | null> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once("error", () => resolve(null));
    server.listen(port, host, () => {
      const bound = (server.address() as { port: number }).port;
      server.close(() => resolve(bound));
    });
  });
}
