import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createWorkload } from "./index.ts";
import { parseScenario } from "./scenario.ts";
import { loadWekaSessions, sessionFold, sessionsInFolds } from "./weka.ts";

const ids = Array.from({ length: 600 }, (_, i) => ({ session: `trace_${String(i).padStart(4, "0")}` }));

describe("Weka folds by session-id hash", () => {
  it("a session's fold depends on its id and k only", () => {
    for (const { session } of ids.slice(0, 50))
      assert.equal(sessionFold(session, 3), sessionFold(session, 3));
    // pinned, so a change of hash (which would silently move sessions between folds) fails here
    assert.deepEqual(
      ["trace_0000", "trace_0001", "trace_0002", "trace_0003", "trace_0291"].map((s) => sessionFold(s, 3)),
      [1, 0, 0, 2, 0],
    );
    const reversed = sessionsInFolds([...ids].reverse(), { k: 3, include: [1] }).map((s) => s.session);
    assert.deepEqual(
      reversed.reverse(),
      sessionsInFolds(ids, { k: 3, include: [1] }).map((s) => s.session),
    );
  });

  it("the folds are disjoint and cover every session, in roughly equal parts", () => {
    for (const k of [2, 3, 5]) {
      const folds = Array.from({ length: k }, (_, f) => sessionsInFolds(ids, { k, include: [f] }));
      const all = folds.flat().map((s) => s.session);
      assert.equal(new Set(all).size, all.length, `k=${k}: a session is in two folds`);
      assert.deepEqual([...all].sort(), ids.map((s) => s.session).sort(), `k=${k}: a session is in no fold`);
      for (const fold of folds) assert.ok(Math.abs(fold.length - ids.length / k) < 0.25 * (ids.length / k));
      // include several folds = their union
      const two = sessionsInFolds(ids, { k, include: [0, k - 1] }).length;
      assert.equal(two, folds[0]!.length + folds[k - 1]!.length);
    }
  });

  it("the development trace splits into three folds of 120–200 sessions", () => {
    const sessions = loadWekaSessions();
    const sizes = [0, 1, 2].map((f) => sessionsInFolds(sessions, { k: 3, include: [f] }).length);
    assert.equal(
      sizes.reduce((a, b) => a + b),
      sessions.length,
    );
    for (const n of sizes) assert.ok(n >= 120 && n <= 200, `fold sizes ${sizes}`);
  });

  it("refuses folds outside [0, k)", () => {
    assert.throws(() => sessionsInFolds(ids, { k: 3, include: [3] }), RangeError);
    const yaml = "durationS: 10\nfleet: {replicas: 1}\nrouter: {config: x.yaml}\n";
    assert.throws(
      () => parseScenario(yaml, "s.yaml", ["workload={type: weka, sessions: 2, fold: {k: 3, include: [3]}}"]),
      /fold/,
    );
    assert.throws(
      () => parseScenario(yaml, "s.yaml", ["workload={type: weka, sessions: 2, fold: {k: 1, include: [0]}}"]),
      /fold/,
    );
  });

  it("a weka workload with a fold draws only that fold's sessions", () => {
    const yaml = "durationS: 600\nfleet: {replicas: 1}\nrouter: {config: x.yaml}\n";
    for (const f of [0, 2]) {
      const scenario = parseScenario(yaml, "s.yaml", [
        `workload={type: weka, sessions: 40, rampS: 0, fold: {k: 3, include: [${f}]}}`,
      ]);
      const workload = createWorkload(scenario.workload, { seed: 1, durationMs: 600_000 });
      const seen = new Set<string>();
      for (let a = workload.nextArrival(); a; a = workload.nextArrival()) {
        const session = /^weka:(.*)#\d+$/.exec(a.request.sessionId ?? "")?.[1];
        assert.ok(session, a.request.sessionId);
        seen.add(session);
      }
      assert.ok(seen.size >= 20, `only ${seen.size} distinct sessions drawn`);
      for (const s of seen) assert.equal(sessionFold(s, 3), f, `${s} is not in fold ${f}`);
    }
  });
});
