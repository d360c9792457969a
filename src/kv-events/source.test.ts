import assert from "node:assert/strict";
import { test } from "node:test";
import { KvEventSource, REPLAY_COOLDOWN_MS, type SourceMessage } from "./source.ts";

const payload = (seq: number) => new Uint8Array([seq]);

/** A source over a publisher whose kept batches are `kept`; records what it applies. */
function harness(kept: number[] | null, fail = false) {
  const applied: number[] = [];
  let resets = 0;
  let now = 0;
  const replays: bigint[] = [];
  let release: () => void = () => {};
  const source = new KvEventSource({
    apply: (p) => applied.push(p[0]!),
    reset: () => {
      resets++;
    },
    now: () => now,
    replay:
      kept === null
        ? null
        : async (from): Promise<SourceMessage[]> => {
            replays.push(from);
            await new Promise<void>((r) => {
              release = r;
            });
            if (fail) throw new Error("timed out");
            return kept
              .filter((s) => BigInt(s) >= from)
              .map((s) => ({ seq: BigInt(s), payload: payload(s) }));
          },
  });
  const send = (...seqs: number[]) => {
    for (const s of seqs) source.receive(BigInt(s), payload(s));
  };
  const finishReplay = async () => {
    release();
    await new Promise((r) => setImmediate(r));
  };
  return {
    source,
    applied,
    replays,
    send,
    finishReplay,
    resets: () => resets,
    tick: (ms: number) => (now += ms),
  };
}

test("in-order batches apply; duplicates drop", () => {
  const h = harness([]);
  h.send(0, 1, 1, 2, 0 + 2);
  assert.deepEqual(h.applied, [0, 1, 2]);
  assert.equal(h.source.stats.duplicates, 2);
});

test("a gap replays from last + 1, and live batches wait for the replay", async () => {
  const h = harness([0, 1, 2, 3, 4]);
  h.send(0, 3);
  assert.deepEqual(h.replays, [1n]);
  h.send(4, 5);
  assert.deepEqual(h.applied, [0]);
  await h.finishReplay();
  assert.deepEqual(h.applied, [0, 1, 2, 3, 4, 5]);
  assert.deepEqual([h.source.stats.gaps, h.source.stats.lost, h.source.stats.duplicates], [1, 0, 2]);
});

test("joining mid-stream replays from 0; a sequence going backwards is a restart", async () => {
  const h = harness([0, 1, 2, 3]);
  h.send(3);
  assert.deepEqual(h.replays, [0n]);
  await h.finishReplay();
  assert.deepEqual(h.applied, [0, 1, 2, 3]);
  h.send(0); // the publisher restarted
  assert.equal(h.resets(), 1);
  assert.deepEqual(h.applied, [0, 1, 2, 3, 0]);
  h.send(1);
  h.send(0);
  assert.equal(h.resets(), 2);
});

test("a failed replay is given up, counted lost, and no other is asked for during the cooldown", async () => {
  const h = harness([0, 1, 2], true);
  h.send(0, 2);
  await h.finishReplay();
  assert.deepEqual(h.applied, [0, 2]);
  assert.deepEqual([h.source.stats.replayFailures, h.source.stats.lost], [1, 1]);
  h.send(5);
  assert.equal(h.replays.length, 1, "cooling down");
  h.tick(REPLAY_COOLDOWN_MS);
  h.send(9);
  assert.equal(h.replays.length, 2);
});

test("without a replay socket, gaps are counted and the stream goes on", () => {
  const h = harness(null);
  h.send(4, 5, 7);
  assert.deepEqual(h.applied, [4, 5, 7]);
  assert.deepEqual([h.source.stats.gaps, h.source.stats.lost], [2, 5]);
});
