import assert from "node:assert/strict";
import {
  mkdtempSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { EndpointMetadata } from "../../src/endpoints/endpoint.ts";
import { EndpointPool } from "../../src/endpoints/pool.ts";
import { fileDiscoverySource } from "../../src/endpoints/sources/file-discovery.ts";
import { FakeEngine, waitFor } from "./fake-engine.ts";

function endpointsYaml(entries: { name: string; port: number | string }[]): string {
  const lines = entries.map(
    (e) => `- {name: ${e.name}, namespace: default, address: 127.0.0.1, port: "${e.port}"}`,
  );
  return `endpoints:\n${lines.join("\n")}\n`;
}

function tempDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), "llmd-discovery-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts a file source and records every set it delivers, as sorted key lists. */
async function follow(t: { after: (fn: () => Promise<void>) => void }, path: string, resyncIntervalMs = 0) {
  const sets: string[][] = [];
  const warnings: string[] = [];
  const source = fileDiscoverySource({
    path,
    debounceMs: 5,
    resyncIntervalMs,
    log: (level, message) => level === "warn" && warnings.push(message),
  });
  await source.start((set: readonly EndpointMetadata[]) => sets.push(set.map((e) => e.key).sort()));
  t.after(() => source.stop());
  return { sets, warnings, latest: () => sets.at(-1) };
}

describe("file-discovery", () => {
  it("reloads on in-place rewrites and on atomic replace, removing vanished entries", async (t) => {
    const dir = tempDir(t);
    const path = join(dir, "endpoints.yaml");
    writeFileSync(path, endpointsYaml([{ name: "a", port: 8001 }]));
    const { sets, latest } = await follow(t, path);
    assert.deepEqual(sets, [["default/a"]]);

    writeFileSync(
      path,
      endpointsYaml([
        { name: "a", port: 8001 },
        { name: "b", port: 8002 },
      ]),
    );
    await waitFor(() => latest()?.length === 2, "in-place rewrite to add b");
    assert.deepEqual(latest(), ["default/a", "default/b"]);

    const staged = join(dir, ".endpoints.yaml.tmp");
    writeFileSync(staged, endpointsYaml([{ name: "c", port: "9000,9001" }]));
    renameSync(staged, path);
    await waitFor(() => latest()?.[0] === "default/c-rank-0", "atomic replace");
    assert.deepEqual(latest(), ["default/c-rank-0", "default/c-rank-1"]);
  });

  it("keeps the previous set when the file turns invalid or disappears, and logs once", async (t) => {
    const dir = tempDir(t);
    const path = join(dir, "endpoints.yaml");
    writeFileSync(path, endpointsYaml([{ name: "a", port: 8001 }]));
    const { sets, warnings, latest } = await follow(t, path, 20);

    // Staged and renamed, so the watcher never sees a half-written file and warns exactly once.
    writeFileSync(`${path}.tmp`, "endpoints: [{name: a, port: nope");
    renameSync(`${path}.tmp`, path);
    await waitFor(() => warnings.length === 1, "a warning about the invalid file");
    await new Promise((r) => setTimeout(r, 80));
    assert.equal(warnings.length, 1, "resyncs must not repeat the same warning");
    unlinkSync(path);
    await waitFor(() => warnings.length === 2, "a warning about the missing file");
    assert.equal(sets.length, 1);

    writeFileSync(path, endpointsYaml([{ name: "b", port: 8002 }]));
    await waitFor(() => latest()?.[0] === "default/b", "recovery after a valid file");
  });

  it("follows a Kubernetes ConfigMap style symlink swap", async (t) => {
    const dir = tempDir(t);
    const path = join(dir, "endpoints.yaml");
    await mkdir(join(dir, "v1"));
    await mkdir(join(dir, "v2"));
    writeFileSync(join(dir, "v1", "endpoints.yaml"), endpointsYaml([{ name: "a", port: 8001 }]));
    writeFileSync(join(dir, "v2", "endpoints.yaml"), endpointsYaml([{ name: "z", port: 8009 }]));
    symlinkSync("v1", join(dir, "..data"));
    symlinkSync(join("..data", "endpoints.yaml"), path);
    const { latest } = await follow(t, path);
    assert.deepEqual(latest(), ["default/a"]);

    symlinkSync("v2", join(dir, "..data_tmp"));
    renameSync(join(dir, "..data_tmp"), join(dir, "..data"));
    assert.equal(readlinkSync(join(dir, "..data")), "v2");
    await waitFor(() => latest()?.[0] === "default/z", "the swapped ConfigMap content");
  });

  it("rejects an invalid file at start", async (t) => {
    const dir = tempDir(t);
    const path = join(dir, "endpoints.yaml");
    writeFileSync(path, "endpoints: 3");
    const source = fileDiscoverySource({ path, log: () => {} });
    await assert.rejects(
      source.start(() => {}),
      /endpoints: .*expected array/,
    );
    await assert.rejects(
      fileDiscoverySource({ path: join(dir, "missing.yaml") }).start(() => {}),
      /cannot read/,
    );
  });

  it("drives an EndpointPool: endpoints added and removed without restart", async (t) => {
    const dir = tempDir(t);
    const path = join(dir, "endpoints.yaml");
    const first = await new FakeEngine().start();
    const second = await new FakeEngine().start();
    writeFileSync(path, endpointsYaml([{ name: "one", port: first.port }]));
    const pool = new EndpointPool({
      source: fileDiscoverySource({ path, debounceMs: 5, resyncIntervalMs: 0, log: () => {} }),
      scrapeIntervalMs: 10,
      log: () => {},
    });
    t.after(() => Promise.all([pool.stop(), first.stop(), second.stop()]));
    await pool.start();
    assert.deepEqual(
      pool.candidates().map((e) => e.metadata.key),
      ["default/one"],
    );

    writeFileSync(
      path,
      endpointsYaml([
        { name: "one", port: first.port },
        { name: "two", port: second.port },
      ]),
    );
    await waitFor(() => pool.candidates().length === 2, "the second endpoint to be scraped and ready");
    writeFileSync(path, endpointsYaml([{ name: "two", port: second.port }]));
    await waitFor(() => pool.all().length === 1, "the first endpoint to be removed");
    assert.deepEqual(
      pool.candidates().map((e) => e.metadata.key),
      ["default/two"],
    );
  });
});
