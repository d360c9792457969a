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
