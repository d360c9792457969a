/**
 * The Responses sink over a real HTTP response: a chat stream is rendered as typed events, and a
 * stream the gateway ends with an error (eviction, upstream failure) ends with an `error` event in
 * the Responses framing, not a chat `data:` line.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { LlmdError } from "../api/errors.ts";
import type { ResponseEcho } from "../responses/render.ts";
import { endStreamWithError } from "./respond.ts";
import { ResponsesSink } from "./responses-sink.ts";

const echo: ResponseEcho = {
  id: "resp_abc",
  model: "m",
  createdAt: 1,
  instructions: null,
  previousResponseId: null,
  maxOutputTokens: null,
  temperature: null,
  tools: [],
  metadata: {},
  store: true,
};

test("a failed stream ends with the Responses error event", async () => {
  let stored = false;
  const server = createServer((_req, res) => {
    const sink = new ResponsesSink(res, echo, "chat", async () => {
      stored = true;
      return undefined;
    });
    sink.writeHead(200, { "content-type": "text/event-stream" });
    sink.write('data: {"choices":[{"delta":{"content":"Hel"}}]}\n\n');
    endStreamWithError(sink, new LlmdError("evicted", "request evicted"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const text = await (await fetch(`http://127.0.0.1:${port}/`)).text();
  server.close();
  const types = [...text.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
  assert.deepEqual(types, [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "error",
  ]);
  assert.match(text, /"code":"evicted"/);
  assert.doesNotMatch(text, /^data: \{"error"/m);
  assert.equal(stored, false, "a failed turn is not stored");
});
