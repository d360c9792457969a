import assert from "node:assert/strict";
import { test } from "node:test";
import { Interrupt, interruptOf } from "./interrupt.ts";

test("an interrupt runs each listener still watching once, with its reason readable", () => {
  const interrupt = new Interrupt();
  const heard: string[] = [];
  interrupt.watch(() => heard.push(`a:${interrupt.reason}`));
  const gone = interrupt.watch(() => heard.push("b"));
  interrupt.watch(() => heard.push("c"));
  interrupt.unwatch(gone);
  assert.equal(interrupt.aborted, false);
  interrupt.pass("deadline");
  interrupt.pass("again");
  assert.deepEqual(heard, ["a:deadline", "c"]);
  assert.deepEqual([interrupt.aborted, interrupt.reason], [true, "deadline"]);
});

test("interruptOf follows an AbortSignal, aborted already or later", () => {
  const late = new AbortController();
  const following = interruptOf(late.signal);
  let heard = 0;
  following.watch(() => heard++);
  late.abort("evicted");
  assert.deepEqual([heard, following.aborted, following.reason], [1, true, "evicted"]);
  const early = interruptOf(AbortSignal.abort("gone"));
  assert.deepEqual([early.aborted, early.reason], [true, "gone"]);
});
