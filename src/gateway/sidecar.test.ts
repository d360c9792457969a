import assert from "node:assert/strict";
import { test } from "node:test";
import { LlmdError } from "../api/errors.ts";
import { choosePrefiller } from "./sidecar.ts";

test("the first prefill endpoint of a list, or a sampled one with --enable-prefiller-sampling", () => {
  const list = "10.0.0.1:8000, 10.0.0.2:8000,10.0.0.3:8000";
  assert.equal(
    choosePrefiller(list, false, () => 0.9),
    "10.0.0.1:8000",
  );
  assert.equal(
    choosePrefiller(list, true, () => 0.5),
    "10.0.0.2:8000",
  );
  assert.equal(
    choosePrefiller(list, true, () => 0.99),
    "10.0.0.3:8000",
  );
  assert.equal(choosePrefiller("[::1]:8000", false, Math.random), "[::1]:8000");
});

test("a value that is not host:port is a 400 naming the header", () => {
  for (const bad of ["", "10.0.0.1", "http://10.0.0.1:80", "10.0.0.1:80/x", "a b:80"]) {
    const chosen = choosePrefiller(bad, false, Math.random);
    assert.ok(chosen instanceof LlmdError, bad);
    assert.equal(chosen.status, 400);
    assert.match(chosen.message, /x-prefiller-host-port/);
  }
});
