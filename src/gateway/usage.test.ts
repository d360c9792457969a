import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BodyTail, findUsage } from "./usage.ts";
import { NOT_PLAIN, plainUsageAt } from "./usage-bytes.ts";

const usageJson = (prompt: number, completion: number, cached: number) =>
  `"usage":{"prompt_tokens":${prompt},"total_tokens":${prompt + completion},"completion_tokens":${completion},"prompt_tokens_details":{"cached_tokens":${cached}}}`;

describe("findUsage", () => {
  const cases: [string, string, ReturnType<typeof findUsage>][] = [
    [
      "non-streaming body",
      `{"id":"x","choices":[{"text":"hi"}],${usageJson(10, 2, 8)}}`,
      { promptTokens: 10, completionTokens: 2, cachedTokens: 8 },
    ],
    [
      "final SSE usage chunk after null usages",
      `data: {"choices":[{"delta":{"content":"a"}}],"usage":null}\n\ndata: {"choices":[],${usageJson(7, 3, 0)}}\n\ndata: [DONE]\n\n`,
      { promptTokens: 7, completionTokens: 3, cachedTokens: 0 },
    ],
    [
      "spaces after the key",
      `{"usage" : {"prompt_tokens": 4, "completion_tokens": 1}}`,
      { promptTokens: 4, completionTokens: 1, cachedTokens: 0 },
    ],
    [
      "content mentioning usage in a string",
      `{"text":"the \\"usage\\": {\\"prompt_tokens\\": 99}"}`,
      undefined,
    ],
    ["no usage at all", `data: {"choices":[]}\n\ndata: [DONE]\n\n`, undefined],
    ["usage object cut off", `{"usage":{"prompt_tokens":4,`, undefined],
    [
      "braces inside strings of the usage object",
      `{"usage":{"note":"}{","prompt_tokens":5}}`,
      { promptTokens: 5, completionTokens: 0, cachedTokens: 0 },
    ],
  ];
  for (const [name, text, expected] of cases) {
    it(name, () => assert.deepEqual(findUsage(Buffer.from(text)), expected));
  }
});

describe("usage read from the bytes, or JSON.parse where the object is not plain", () => {
  const usage = (promptTokens: number, completionTokens = 0, cachedTokens = 0) => ({
    promptTokens,
    completionTokens,
    cachedTokens,
  });
  // [usage object, what JSON.parse gives, read from the bytes (plain) or by JSON.parse]
  const cases: [string, ReturnType<typeof findUsage>, boolean][] = [
    [
      `{"prompt_tokens":3,"total_tokens":4,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":2}}`,
      usage(3, 1, 2),
      true,
    ],
    [`{ "prompt_tokens" : 12 ,\n "completion_tokens":\t5\r\n}`, usage(12, 5), true],
    [`{"prompt_tokens":4,"prompt_tokens_details":null,"completion_tokens":null}`, usage(4), true],
    [
      `{"prompt_tokens":1,"prompt_tokens":2,"prompt_tokens_details":{"cached_tokens":5},"prompt_tokens_details":{}}`,
      usage(2),
      true,
    ],
    [`{"prompt_tokens":7,"completion_tokens_details":{"cached_tokens":9}}`, usage(7), true],
    [
      `{"prompt_tokens":7,"prompt_tokens_details":{"cached_tokens":3,"x":{"cached_tokens":99}}}`,
      usage(7, 0, 3),
      true,
    ],
    [`{"__proto__":1,"prompt_tokens":2,"prompt_tokens_details":7}`, usage(2), true],
    [`{"prompt_tokens":null}`, undefined, true],
    [`{"prompt_tokens":{"a":1}}`, undefined, true],
    [`{}`, undefined, true],
    [`{"prompt_tokens":3.0}`, usage(3), false],
    [`{"prompt_tokens":-1}`, usage(-1), false],
    [`{"prompt_tokens":1e2}`, usage(100), false],
    [`{"prompt_tokens":1234567890123456}`, usage(1234567890123456), false],
    [`{"prompt_tokens":5,"note":"x"}`, usage(5), false],
    [`{"prompt\\u005ftokens":5}`, usage(5), false],
    [`{"prompt_tokens":01}`, undefined, false],
    [`{"prompt_tokens":1,}`, undefined, false],
    [`{"prompt_tokens":1 2}`, undefined, false],
  ];
  for (const [object, expected, plain] of cases) {
    it(object, () => {
      const text = `{"id":"x","usage":${object}}`;
      assert.deepEqual(findUsage(Buffer.from(text)), expected);
      const start = text.indexOf(object);
      const read = plainUsageAt(Buffer.from(text), start, start + object.length);
      assert.equal(read !== NOT_PLAIN, plain);
    });
  }
});

describe("BodyTail", () => {
  it("keeps the end of a long stream across chunk boundaries", () => {
    const tail = new BodyTail();
    for (let i = 0; i < 500; i++)
      tail.push(Buffer.from(`data: {"choices":[{"delta":{"content":"token ${i}"}}]}\n\n`));
    const final = `data: {"choices":[],${usageJson(123, 500, 64)}}\n\ndata: [DONE]\n\n`;
    // The usage chunk arrives split in three pieces.
    tail.push(Buffer.from(final.slice(0, 20)));
    tail.push(Buffer.from(final.slice(20, 60)));
    tail.push(Buffer.from(final.slice(60)));
    const kept = tail.buffer();
    assert.ok(kept.length < 8192, `tail kept ${kept.length} bytes`);
    assert.deepEqual(findUsage(kept), { promptTokens: 123, completionTokens: 500, cachedTokens: 64 });
  });
});
