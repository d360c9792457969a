import assert from "node:assert/strict";
import { test } from "node:test";
import { SESSION_ID } from "../../framework/data-keys.ts";
import { makeContext } from "../../framework/testing.ts";
import type { DataProducer } from "../../framework/types.ts";
import { instantiate } from "../testing.ts";
import { cookieValue, definition } from "./index.ts";

test("exactly one of headerName and cookieName", () => {
  assert.throws(() => definition.parameters.parse({}));
  assert.throws(() => definition.parameters.parse({ headerName: "a", cookieName: "b" }));
  assert.throws(() => definition.parameters.parse({ headerName: "a", other: 1 }));
});

test("reads the header (case-insensitive name) or the cookie", async () => {
  const byHeader = instantiate<DataProducer>(definition, { headerName: "X-Session-Id" });
  const ctx = makeContext({ headers: { "x-session-id": "s-1" } });
  await byHeader.produce(ctx, []);
  assert.equal(ctx.request.attributes.get(SESSION_ID), "s-1");
  const byCookie = instantiate<DataProducer>(definition, { cookieName: "sid" });
  const withCookie = makeContext({ headers: { cookie: "a=1; sid=abc%20d; b=2" } });
  await byCookie.produce(withCookie, []);
  assert.equal(withCookie.request.attributes.get(SESSION_ID), "abc d");
  const none = makeContext();
  await byCookie.produce(none, []);
  assert.equal(none.request.attributes.has(SESSION_ID), false);
  assert.equal(cookieValue("sidx=1", "sid"), undefined);
});
