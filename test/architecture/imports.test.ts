/**
 * The layout's import rules, read from the source: no cycle between top-level folders of `src/`,
 * a scheduler plugin never imports another plugin, hosts never reach into plugin internals, and
 * `engine`/`sim` know nothing of the router.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { test } from "node:test";
import { sourceFiles } from "./source-files.ts";

const SRC = resolve(import.meta.dirname, "../../src");
const IMPORT =
  /(?:import|export)\s[^'"]*?from\s+["'](\.{1,2}\/[^"']+)["']|import\(\s*["'](\.{1,2}\/[^"']+)["']/g;

interface Edge {
  from: string;
  to: string;
}

/** Every relative import of a non-test source file, as paths relative to `src/`. */
function importEdges(): Edge[] {
  return sourceFiles(SRC).flatMap((file) =>
    [...readFileSync(file, "utf8").matchAll(IMPORT)].map((m) => ({
      from: relative(SRC, file),
      to: relative(SRC, resolve(dirname(file), (m[1] ?? m[2])!)),
    })),
  );
}

const top = (path: string) => path.split("/")[0]!;

/** Strongly connected components of size > 1 (Tarjan). */
function cycles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) component.push(w);
    if (component.length > 1) out.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

const edges = importEdges();

test("no import cycle between the top-level folders of src/", () => {
  const graph = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    if (top(from) === top(to) || to.startsWith("..")) continue;
    if (!graph.has(top(from))) graph.set(top(from), new Set());
    graph.get(top(from))!.add(top(to));
  }
  const found = cycles(graph);
  const detail = found.map((c) =>
    edges.filter((e) => c.includes(top(e.from)) && c.includes(top(e.to)) && top(e.from) !== top(e.to)),
  );
  assert.deepEqual(found, [], JSON.stringify(detail, null, 1));
});

const PLUGIN = /^scheduler\/plugins\/([^/]+)\//;

test("a scheduler plugin imports no other plugin (shared helpers live in plugins/shared)", () => {
  const crossing = edges.filter(({ from, to }) => {
    const source = PLUGIN.exec(from)?.[1];
    const target = PLUGIN.exec(to)?.[1];
    return source && target && source !== target && target !== "shared";
  });
  assert.deepEqual(crossing, []);
});

test("hosts and the layers under them reach no plugin internals", () => {
  const inward = edges.filter(({ from, to }) => {
    const outside = !from.startsWith("scheduler/") && !from.startsWith("config/");
    return outside && PLUGIN.test(to);
  });
  assert.deepEqual(inward, []);
});

test("engine and sim know nothing of the router", () => {
  const allowed = new Set(["engine", "sim", "core", "api", "tokenizer"]);
  const leaks = edges.filter(
    ({ from, to }) => (top(from) === "engine" || top(from) === "sim") && !allowed.has(top(to)),
  );
  assert.deepEqual(leaks, []);
});

test("the scheduler framework imports no host, config, discovery or cli", () => {
  const banned = new Set(["gateway", "config", "cli", "fleet", "flow-control", "load"]);
  const leaks = edges.filter(
    ({ from, to }) =>
      from.startsWith("scheduler/framework/") && (banned.has(top(to)) || to.startsWith("endpoints/sources")),
  );
  assert.deepEqual(leaks, []);
});

test("docs/architecture.md lists every top-level folder of src/", () => {
  const doc = readFileSync(resolve(import.meta.dirname, "../../docs/architecture.md"), "utf8");
  const folders = readdirSync(SRC, { withFileTypes: true }).filter((e) => e.isDirectory());
  const missing = folders.map((e) => e.name).filter((name) => !doc.includes(`| \`${name}/\` |`));
  assert.deepEqual(missing, []);
});
