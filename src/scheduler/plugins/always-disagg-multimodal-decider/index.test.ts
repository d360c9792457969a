import assert from "node:assert/strict";
import { test } from "node:test";
import { makeContext, makeEnv } from "../../framework/testing.ts";
import type { Decider } from "../shared/decider.ts";
import { isMultimodal } from "../shared/multimodal.ts";
import { definition } from "./index.ts";

const user = (content: unknown) => ({
  messages: [
    { role: "system", content: "be brief" },
    { role: "user", content },
  ],
});
const text = { type: "text", text: "what is this?" };

const CASES: { name: string; body: Record<string, unknown>; want: boolean }[] = [
  { name: "string content", body: user("hello"), want: false },
  { name: "text parts only", body: user([text]), want: false },
  {
    name: "an image_url part",
    body: user([text, { type: "image_url", image_url: { url: "data:," } }]),
    want: true,
  },
  { name: "a video_url part", body: user([{ type: "video_url", video_url: { url: "v.mp4" } }]), want: true },
  {
    name: "an input_audio part",
    body: user([{ type: "input_audio", input_audio: { data: "", format: "wav" } }]),
    want: true,
  },
  { name: "a completions prompt", body: { prompt: "image_url" }, want: false },
  { name: "no messages", body: {}, want: false },
  {
    name: "malformed messages",
    body: { messages: [null, 3, { content: [null, { type: 7 }] }] },
    want: false,
  },
];

for (const c of CASES) {
  test(`always-disagg-multimodal-decider: ${c.name} → ${c.want}`, () => {
    const decider = definition.create({}, makeEnv("mm")) as Decider;
    assert.equal(isMultimodal(c.body), c.want);
    assert.equal(decider.disaggregate(makeContext({ body: c.body }), undefined), c.want);
  });
}
