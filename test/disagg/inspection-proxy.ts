/**
 * A test-only HTTP proxy in front of one model server: it records every POST it relays (path,
 * headers, parsed body, and the answer's status and body) and can answer the next POSTs itself with
 * 503, as an overloaded prefill server does. GETs (metrics scrapes) pass through unrecorded.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";

/** One relayed POST. */
export interface Seen {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
  status: number;
  answer: string;
}

export interface InspectionProxy {
  url: string;
  port: number;
  seen: Seen[];
  /** The next `n` POSTs are answered 503 without reaching the server. */
  failNext(n: number): void;
  close(): Promise<void>;
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Starts a proxy on a free loopback port in front of `target` (`http://host:port`). */
export async function startInspectionProxy(target: string): Promise<InspectionProxy> {
  const seen: Seen[] = [];
  let failing = 0;
  const server: Server = createServer(async (req, res) => {
    const body = await readAll(req);
    const path = req.url ?? "/";
    const record = (status: number, answer: string) => {
      if (req.method === "POST")
        seen.push({ path, headers: req.headers, body: JSON.parse(body.toString()), status, answer });
    };
    if (req.method === "POST" && failing > 0) {
      failing--;
      const answer = JSON.stringify({ error: { message: "overloaded", type: "server_error", code: 503 } });
      record(503, answer);
      res.writeHead(503, { "content-type": "application/json" }).end(answer);
      return;
    }
    const headers = { ...req.headers };
    delete headers.host;
    delete headers.connection;
    const upstream = await request(`${target}${path}`, {
      method: req.method as "GET" | "POST",
      headers,
      body: req.method === "POST" ? body : null,
    });
    const answer = Buffer.from(await upstream.body.arrayBuffer());
    record(upstream.statusCode, answer.toString());
    const out = { ...upstream.headers };
    delete out["transfer-encoding"];
    delete out.connection;
    out["content-length"] = String(answer.length);
    res.writeHead(upstream.statusCode, out).end(answer);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    failNext: (n) => {
      failing = n;
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
