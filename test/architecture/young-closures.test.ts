/**
 * The request path never assigns a function literal to a property (`this.onX = () => …`): V8
 * allocates such a literal in the old generation, expecting a long-lived method, and a per-request
 * closure there keeps its request's objects (through its context) alive through every scavenge
 * until a full collection. In the router's closed loop that made a fifth of the young generation
 * survive each scavenge (docs/benchmarks-router.md, "The garbage collector's share"). Bind a method
 * or assign a local instead.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { test } from "node:test";
import { sourceFiles } from "./source-files.ts";

const SRC = resolve(import.meta.dirname, "../../src");
/** Folders whose code runs per request in the router. */
const REQUEST_PATH = ["api", "core", "flow-control", "gateway", "http1", "lifecycle"];
const LITERAL_TO_PROPERTY =
  /[\w$\]]\.[\w$]+\s*(?:=|\?\?=|\|\|=)\s*(?:async\s+)?(?:function\b|\([^()]*\)\s*(?::[^=]+)?=>|[\w$]+\s*=>)/;

test("the pattern finds a function literal assigned to a property", () => {
  for (const line of [
    "this.onClose = () => {",
    "x.cb = async (a, b) => a",
    "res.h ??= function () {",
    "a.b = v => v",
  ])
    assert.match(line, LITERAL_TO_PROPERTY, line);
  for (const line of [
    "this.onClose = this.closed.bind(this);",
    "const idle = () => {",
    "this.n = (a + b) * 2;",
  ])
    assert.doesNotMatch(line, LITERAL_TO_PROPERTY, line);
});

test("no function literal is assigned to a property on the request path", () => {
  const found = REQUEST_PATH.flatMap((folder) =>
    sourceFiles(join(SRC, folder)).flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, i) =>
          LITERAL_TO_PROPERTY.test(line) && !/^\s*(\/\/|\*)/.test(line)
            ? [`${relative(SRC, file)}:${i + 1}: ${line.trim()}`]
            : [],
        ),
    ),
  );
  assert.deepEqual(found, []);
});
