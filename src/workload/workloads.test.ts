import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defaultTokenizer } from "../tokenizer/tokenizer.ts";
import { IdealPrefixCache } from "../measure/ideal-cache.ts";
import { AgentSession } from "./agent-session.ts";
import { AGENTIC_DEFAULTS, agenticSession } from "./agentic.ts";
import { ClosedLoopWorkload } from "./closed-loop.ts";
import { MooncakeWorkload, mooncakeSegments } from "./mooncake.ts";
import { SyntheticPromptBuilder } from "./synthetic-prompt.ts";
import { ReplayClock, replayWindow } from "./replay.ts";
import { makeRequest } from "./types.ts";
import { type WekaSession, wekaPlan, wekaSegments } from "./weka.ts";

describe("synthetic prompts", () => {
  const builder = new SyntheticPromptBuilder();
  const segments = [
    { ns: "mc", id: 0, tokens: 512 },
    { ns: "mc", id: 7, tokens: 100 },
  ];

  it("tokens equal what the tokenizer makes of the text (4 chars per token)", () => {
    const text = builder.text(segments);
    assert.equal(text.length, 612 * 4);
    assert.deepEqual(builder.tokens(segments), defaultTokenizer.encode(text));
  });

  it("prompts share exactly their common leading segments", () => {
    const a = builder.text(segments);
    const b = builder.text([segments[0]!, { ns: "mc", id: 8, tokens: 100 }]);
    assert.equal(a.slice(0, 2048), b.slice(0, 2048));
    assert.notEqual(a.slice(2048), b.slice(2048));
    // a truncated segment is a prefix of the full one
    assert.equal(builder.text([{ ns: "mc", id: 0, tokens: 10 }]), a.slice(0, 40));
  });
});

describe("trace readers", () => {
  it("Mooncake: ceil(L/512) blocks, the last truncated", () => {
    const segs = mooncakeSegments({ timestamp: 0, input_length: 600, output_length: 1, hash_ids: [3, 4] });
    assert.deepEqual(
      segs.map((s) => [s.id, s.tokens]),
      [
        [3, 512],
        [4, 88],
      ],
    );
  });

  it("Mooncake: a window from startS replays the rows from there, re-timed to start at zero", () => {
    const rows = [0, 500, 1_000, 1_500, 2_500].map((timestamp, i) => ({
      timestamp,
      input_length: 512 * (i + 1),
      output_length: 1,
      hash_ids: Array.from({ length: i + 1 }, (_, k) => k),
    }));
    const window = new MooncakeWorkload(
      replayWindow(rows, (r) => r.timestamp, { startS: 1, limit: 2 }),
      {
        timeScale: 2,
        startS: 1,
      },
    );
    const first = window.nextArrival()!;
    const second = window.nextArrival()!;
    assert.deepEqual([first.atMs, second.atMs], [0, 250]);
    assert.equal(first.request.segments.length, 3);
    assert.equal(window.nextArrival(), undefined);
    assert.throws(
      () => replayWindow(rows, (r) => r.timestamp, { startS: 3 }),
      /workload.startS 3 s is after the trace's last arrival \(2.5 s\)/,
    );
    assert.equal(replayWindow(rows, (r) => r.timestamp, { startS: 2.5 }).length, 1);
    assert.deepEqual(
      replayWindow([], (r: { timestamp: number }) => r.timestamp, { startS: 3 }),
      [],
    );
  });

  it("replay jitter: seeded, under jitterMs, never before the previous arrival", () => {
    const times = (seed: number) => {
      const clock = new ReplayClock({ timeScale: 1, jitterMs: 5, seed });
      return [0, 0, 1, 100, 100].map((ms) => clock.next(ms));
    };
    const a = times(1);
    assert.deepEqual(times(1), a);
    assert.notDeepEqual(times(2), a);
    [0, 0, 1, 100, 100].forEach((ms, i) => {
      assert.ok(a[i]! >= ms && a[i]! < ms + 5);
      if (i > 0) assert.ok(a[i]! >= a[i - 1]!);
    });
    const exact = new ReplayClock({ timeScale: 4, startS: 1 });
    assert.deepEqual([exact.next(1_000), exact.next(3_000)], [0, 500]);
  });

  it("Weka: a block per id, a unique tail, warm ids in the shared namespace", () => {
    const shared = new Map([[5, { ns: "weka:shared", id: 0, tokens: 64 }]]);
    const segs = wekaSegments([5, 6], 130, "weka:s#0", shared, "main:0");
    assert.deepEqual(
      segs.map((s) => [s.ns, s.id, s.tokens]),
      [
        ["weka:shared", 0, 64],
        ["weka:s#0", 6, 64],
        ["weka:s#0:tail:main:0", 0, 2],
      ],
    );
  });
});

function row(agent: string, i: number, t: number, think: number) {
  return {
    session: "s",
    agent,
    i,
    t,
    in: 200,
    out: 5,
    api_time: 1,
    think_time: think,
    hash_runs: [[1, 3]] as [number, number][],
  };
}

describe("closed-loop sessions", () => {
  const session: WekaSession = {
    session: "s",
    toolTokens: 128,
    systemTokens: 0,
    subagents: [{ agent_id: "agent_001", t_spawn: 12, tool_tokens: 0, system_tokens: 0 }],
    agents: new Map([
      ["main", [row("main", 0, 0, 0), row("main", 1, 10, 9), row("main", 2, 40, 5)]],
      ["agent_001", [row("agent_001", 0, 12, 0), row("agent_001", 1, 20, 3)]],
    ]),
  };

  it("Weka: sub-agents start after the main turn before their spawn; the next main turn waits", () => {
    const s = new AgentSession(wekaPlan(session, 0, { warmFraction: 1, thinkCapMs: 60_000 }));
    const [first] = s.start();
    assert.equal(first!.request.id, "weka:s#0:main:0");
    const afterFirst = s.onComplete(first!.request.id);
    assert.deepEqual(
      afterFirst.map((d) => [d.request.id, d.delayMs]),
      [["weka:s#0:main:1", 9000]],
    );
    const afterSecond = s.onComplete("weka:s#0:main:1");
    // spawn at t=12 s, parent (t=10, api 1 s) ended at 11 s → 1 s later
    assert.deepEqual(
      afterSecond.map((d) => [d.request.id, d.delayMs]),
      [["weka:s#0:agent_001:0", 1000]],
    );
    assert.deepEqual(
      s.onComplete("weka:s#0:agent_001:0").map((d) => d.request.id),
      ["weka:s#0:agent_001:1"],
    );
    assert.deepEqual(
      s.onComplete("weka:s#0:agent_001:1").map((d) => [d.request.id, d.delayMs]),
      [["weka:s#0:main:2", 5000]],
    );
    assert.equal(s.done, false);
    assert.deepEqual(s.onComplete("weka:s#0:main:2"), []);
    assert.equal(s.done, true);
  });

  it("Weka: two sub-agents of one type get distinct request ids and prompt tails", () => {
    const twins: WekaSession = {
      session: "s",
      toolTokens: 0,
      systemTokens: 0,
      subagents: ["x1", "x2"].map((agent_id) => ({ agent_id, subagent_type: "Explore", t_spawn: 5 })),
      agents: new Map([
        ["main", [row("main", 0, 0, 0)]],
        ["x1", [row("x1", 0, 5, 0)]],
        ["x2", [row("x2", 0, 5, 0)]],
      ]),
    };
    const s = new AgentSession(wekaPlan(twins, 0, { warmFraction: 1, thinkCapMs: 60_000 }));
    const [main] = s.start();
    const spawned = s.onComplete(main!.request.id).map((d) => d.request);
    assert.deepEqual(
      spawned.map((r) => r.id),
      ["weka:s#0:x1:0", "weka:s#0:x2:0"],
    );
    const tails = spawned.map((r) => r.segments.at(-1)!.ns);
    assert.notEqual(tails[0], tails[1]);
  });

  it("Weka: segments resolve shared blocks as known when the request was built, on every read", () => {
    // Two sub-agents spawned together: A maps id 1 to its shared namespace, then B (built right
    // after A) maps ids 1-3; A's request must keep ids 2 and 3 in its own namespace.
    const siblings: WekaSession = {
      session: "s",
      toolTokens: 0,
      systemTokens: 0,
      subagents: [
        { agent_id: "a", t_spawn: 5, tool_tokens: 64 },
        { agent_id: "b", t_spawn: 5, tool_tokens: 192 },
      ],
      agents: new Map([
        ["main", [row("main", 0, 0, 0)]],
        ["a", [row("a", 0, 5, 0)]],
        ["b", [row("b", 0, 5, 0)]],
      ]),
    };
    const s = new AgentSession(wekaPlan(siblings, 0, { warmFraction: 1, thinkCapMs: 60_000 }));
    const [main] = s.start();
    const [a, b] = s.onComplete(main!.request.id).map((d) => d.request);
    const namespaces = (r: typeof a) => r!.segments.map((g) => g.ns);
    assert.deepEqual(namespaces(a), ["weka:shared:a", "weka:s#0", "weka:s#0", "weka:s#0:tail:a:0"]);
    assert.deepEqual(namespaces(b), ["weka:shared:a", "weka:shared:b", "weka:shared:b", "weka:s#0:tail:b:0"]);
    const firstRead = a!.segments;
    assert.notEqual(a!.segments, firstRead, "rebuilt on each read");
    assert.deepEqual(a!.segments, firstRead, "every read yields the same segments");
    assert.equal(a!.inputTokens, 200);
    assert.equal(
      firstRead.reduce((sum, g) => sum + g.tokens, 0),
      a!.inputTokens,
      "segments sum to the input",
    );
  });

  it("replaces a finished session so concurrency stays constant", () => {
    let made = 0;
    const oneTurn = (i: number) => {
      made++;
      return new AgentSession({
        turns: [{ thinkMs: 0, build: () => makeRequest(`r${i}`, [{ ns: "x", id: i, tokens: 4 }], 1) }],
      });
    };
    const w = new ClosedLoopWorkload({
      name: "t",
      concurrency: 2,
      rampMs: 1000,
      stopAtMs: 10_000,
      factory: oneTurn,
    });
    const a = w.nextArrival()!;
    const b = w.nextArrival()!;
    assert.deepEqual([a.atMs, b.atMs], [0, 500]);
    assert.equal(w.nextArrival(), undefined);
    const next = w.onComplete(a.request, 2000);
    assert.deepEqual(
      next.map((x) => [x.request.id, x.atMs]),
      [["r2", 2000]],
    );
    assert.deepEqual(w.onComplete(b.request, 20_000), []); // past stopAtMs: no replacement
    assert.equal(made, 3);
  });
});

describe("agentic generator", () => {
  it("is calibrated to the published statistics (median input ≈195K, output ≈317, ≥90% reuse ≈96%)", () => {
    const inputs: number[] = [];
    const outputs: number[] = [];
    let reuse90 = 0;
    for (let i = 0; i < 80; i++) {
      const s = agenticSession({ ...AGENTIC_DEFAULTS, seed: 7 }, i);
      const cache = new IdealPrefixCache(16);
      for (let pending = s.start(); pending.length > 0; ) {
        pending = pending.flatMap((d) => {
          const r = d.request;
          const hit = cache.lookupAndInsert(r.segments, r.inputTokens);
          if (r.kind === "main") {
            inputs.push(r.inputTokens);
            outputs.push(r.outputTokens);
            if (hit >= 0.9 * r.inputTokens) reuse90++;
          }
          return s.onComplete(r.id);
        });
      }
    }
    const median = (v: number[]) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
    assert.ok(median(inputs) > 150_000 && median(inputs) < 240_000, `median input ${median(inputs)}`);
    assert.ok(median(outputs) > 260 && median(outputs) < 380, `median output ${median(outputs)}`);
    const share = reuse90 / inputs.length;
    assert.ok(share > 0.93 && share < 0.99, `reuse share ${share}`);
  });
});
