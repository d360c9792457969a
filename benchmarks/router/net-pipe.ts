/**
 * The least any Node.js relay does per byte, for the router benchmark: node:net joins each client
 * connection to one upstream connection (round-robin) and copies bytes both ways, parsing no HTTP.
 * It balances connections, not requests, so it is no HTTP proxy; its row is what Node's socket
 * layer alone costs (one read and one write per relayed token), under any Node.js proxy's.
 * Usage: node --import tsx net-pipe.ts <upstream-url>… (prints `listening on <url>`).
 */
import { connect, createServer, type Socket } from "node:net";

const upstreams = process.argv.slice(2).map((url) => new URL(url));
let next = 0;

function join(client: Socket, upstream: Socket): void {
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  for (const socket of [client, upstream]) socket.on("error", close).on("close", close);
  client.pipe(upstream);
  upstream.pipe(client);
}

const server = createServer({ noDelay: true }, (client) => {
  const target = upstreams[next++ % upstreams.length] as URL;
  join(client, connect({ host: target.hostname, port: Number(target.port), noDelay: true }));
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  process.stdout.write(`listening on http://127.0.0.1:${port}\n`);
});
