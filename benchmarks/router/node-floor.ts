/**
 * The floor of any Node.js proxy, for the router benchmark: node:http in front, undici's dispatch
 * API behind, round-robin, no parsing, scheduling, metrics or header hygiene; JSON answers are
 * buffered, SSE streams written through chunk by chunk. What `llmd router`
 * costs above this row is llmd's own work; what this row costs above nginx is Node's.
 * Usage: node --import tsx node-floor.ts <upstream-url>… (prints `listening on <url>`).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Pool } from "undici";

const pools = process.argv.slice(2).map((url) => new Pool(url, { connections: 256 }));
let next = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    const pool = pools[next++ % pools.length] as Pool;
    const out: Buffer[] = [];
    let status = 502;
    let streaming = false;
    const headers = { "content-type": "application/json", "content-length": String(body.length) };
    pool.dispatch(
      { path: req.url ?? "/", method: "POST", headers, body },
      {
        onRequestStart: () => {},
        onResponseStart: (_c, statusCode, upstream) => {
          status = statusCode;
          // SSE is relayed chunk by chunk as it arrives (no back-pressure: the floor's least work).
          streaming = String(upstream["content-type"]).startsWith("text/event-stream");
          if (streaming) res.writeHead(status, { "content-type": "text/event-stream" });
        },
        onResponseData: (_c, chunk) => {
          if (streaming) res.write(chunk);
          else out.push(chunk);
        },
        onResponseEnd: () => {
          if (streaming) return void res.end();
          const payload = Buffer.concat(out);
          res.writeHead(status, { "content-type": "application/json", "content-length": payload.length });
          res.end(payload);
        },
        onResponseError: (_c, error) => void res.destroy(error),
      },
    );
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
