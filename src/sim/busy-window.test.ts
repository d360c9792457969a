import assert from "node:assert/strict";
import { test } from "node:test";
import { BusyWindow } from "./busy-window.ts";

test("the busy share of the last window, clipped at both ends", () => {
  const w = new BusyWindow(1000);
  assert.equal(w.fraction(500), 0);
  w.add(0, 400);
  w.add(600, 200);
  assert.equal(w.fraction(1000), 0.6);
  assert.equal(w.fraction(1300), 0.3, "(300, 1300]: 100 ms of the first step, all of the second");
  assert.equal(w.fraction(700), 0.5, "a step under way counts up to now");
  assert.equal(w.fraction(5000), 0);
});

test("back-to-back steps read 1; old steps are dropped as new ones come", () => {
  const w = new BusyWindow(100);
  for (let t = 0; t < 10_000; t += 10) w.add(t, 10);
  assert.equal(w.fraction(10_000), 1);
  assert.ok((w as unknown as { starts: number[] }).starts.length <= 11, "bounded by the window");
});
