import { once } from "node:events";
import { createServer } from "node:net";
import { test } from "node:test";
import { freePortRange } from "./free-port.ts";

test("freePortRange returns the first of n consecutive ports that can all be bound", async () => {
  const base = await freePortRange(3);
  const servers = [0, 1, 2].map((i) => createServer().listen(base + i, "0.0.0.0"));
  await Promise.all(servers.map((s) => once(s, "listening")));
  for (const s of servers) s.close();
});
