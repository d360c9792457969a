import assert from "node:assert/strict";
import { test } from "node:test";
import { seededRandom } from "../core/random.ts";
import { parseJsonBytes, parseJsonSkeleton } from "./json-bytes.ts";

/** A string long enough to be decoded natively, in a body large enough to be scanned. */
const LONG = "x".repeat(70 * 1024);

/** What `parse` makes of `raw`: the value, or the thrown error's class and message. */
function outcome(parse: (raw: Buffer) => unknown, raw: Buffer): unknown {
  try {
    return { value: parse(raw) };
  } catch (err) {
    return { error: (err as Error).constructor.name, message: (err as Error).message };
  }
}

function assertLikeJsonParse(raw: Buffer, label = raw.subarray(0, 60).toString()): void {
  const expected = outcome((bytes) => JSON.parse(bytes.toString("utf8")), raw);
  assert.deepEqual(outcome(parseJsonBytes, raw), expected, label);
}

const body = (json: string) => Buffer.from(json, "utf8");

test("a large body with long prompt strings parses exactly as JSON.parse does", () => {
  const completion = { model: "m", prompt: `hi 1 ${LONG}`, max_tokens: 1, stream: false };
  assertLikeJsonParse(body(JSON.stringify(completion)));
  const messages = Array.from({ length: 12 }, (_, i) => ({
    role: i % 2 ? "assistant" : "user",
    content: i % 3 ? `turn ${i} ${LONG.slice(i * 1000)}` : [{ type: "text", text: `part ${i} ${LONG}` }],
  }));
  assertLikeJsonParse(body(JSON.stringify({ model: "m", messages, cache_salt: "s" })));
});

test("long strings that need JSON's decoding are left to it: escapes, non-ASCII, keys, duplicates", () => {
  const cases = [
    { prompt: `${LONG}\n"quoted" \\ back\u00e9 \ud83d\ude00 \u0001` },
    { prompt: `${LONG}é😀 multi-byte UTF-8 written raw` },
    { [`key ${LONG}`]: "a long key", prompt: "short" },
    { prompt: `${LONG}\\` }, // ends in an escaped backslash: the closing quote is not escaped
    { nested: [[{ deep: LONG }], LONG, { a: [LONG, 1, null, true] }] },
    { prompt: "\u0000llmd-00:0", other: "\u0000llmd-", filler: LONG }, // placeholder-like client text
  ];
  for (const value of cases) assertLikeJsonParse(body(JSON.stringify(value)));
  // Whitespace everywhere JSON allows it, and a key a space away from its colon.
  assertLikeJsonParse(body(` {\n "prompt" : "${LONG}" ,\t"k"\r\n:\n"${LONG}" } `));
  // Duplicate keys: the last wins, as in JSON.parse, whichever of them was long.
  assertLikeJsonParse(body(`{"prompt":"${LONG}","prompt":"last"}`));
  assertLikeJsonParse(body(`{"prompt":"first","prompt":"${LONG}y"}`));
});

test("invalid bodies throw JSON.parse's own error", () => {
  const cases = [
    `{"prompt":"${LONG}"`, // truncated
    `{"prompt":"${LONG}`, // unterminated string
    `{"prompt":"${LONG}"} trailing`,
    `{"prompt":"${LONG}\u0001"}`, // a raw control character
    `{"prompt":"${LONG}\t"}`, // a raw tab is a control character too
    `{"prompt":"${LONG}\\q"}`, // an invalid escape
    `{"prompt" "${LONG}"}`,
    `["${LONG}",]`,
    `{"a":x"${LONG}"}`,
  ];
  for (const json of cases) assertLikeJsonParse(body(json), json.slice(-12));
});

test("a control character is found at every position and alignment of a long string", () => {
  for (const offset of [0, 1, 2, 3]) {
    for (const at of [0, 1, 2, 3, 4, 5, 1000, LONG.length - 5, LONG.length - 1]) {
      const chars = [...LONG];
      chars[at] = "\u001f";
      const json = body(`${" ".repeat(offset)}{"prompt":"${chars.join("")}"}`);
      // A view at every byte offset of its backing buffer, as a body read into a pool slice is.
      const backing = Buffer.alloc(json.length + offset);
      json.copy(backing, offset);
      assertLikeJsonParse(backing.subarray(offset), `offset ${offset}, at ${at}`);
    }
  }
});

test("invalid UTF-8 inside a long string decodes as Buffer#toString does (replacement characters)", () => {
  const json = body(`{"prompt":"${LONG}"}`);
  const broken = Buffer.concat([
    json.subarray(0, 100),
    Buffer.from([0xc3, 0xff, 0xe2, 0x82]),
    json.subarray(100),
  ]);
  assertLikeJsonParse(broken);
  const cutBeforeQuote = Buffer.concat([
    json.subarray(0, json.length - 2),
    Buffer.from([0xe2]),
    json.subarray(-2),
  ]);
  assertLikeJsonParse(cutBeforeQuote);
});

test("seeded random documents mixing long and short strings, escapes and structure", () => {
  const random = seededRandom(17);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const pieces = ["a", "é", "😀", "\\", '"', "\n", "\u0002", " ", "\u0000llmd-"];
  const text = (): string => {
    const long = random() < 0.5;
    let s = long ? "y".repeat(4096 + Math.floor(random() * 8192)) : "";
    for (let i = Math.floor(random() * 4); i > 0; i--) s += pick(pieces);
    return random() < 0.5 ? s : s.split("").reverse().join("");
  };
  const value = (depth: number): unknown => {
    const kind = depth > 3 ? 0 : Math.floor(random() * 4);
    if (kind === 0) return pick([text(), 1.5, null, true, text()]);
    if (kind === 1) return Array.from({ length: 1 + Math.floor(random() * 4) }, () => value(depth + 1));
    return Object.fromEntries(
      Array.from({ length: 1 + Math.floor(random() * 4) }, () => [text().slice(0, 5000), value(depth + 1)]),
    );
  };
  for (let i = 0; i < 200; i++) {
    const json = JSON.stringify({ model: "m", filler: LONG, doc: value(0) });
    // Some documents raw (control characters unescaped), some cut short: invalid ones included.
    const raw = random() < 0.2 ? json.replace(/\\n/g, "\n") : json;
    assertLikeJsonParse(
      body(random() < 0.1 ? raw.slice(0, Math.floor(random() * raw.length)) : raw),
      `doc ${i}`,
    );
  }
});

test("long strings stay bytes until read: ASCII ones as prompt pieces, the rest decoded", () => {
  const ascii = `hi ${LONG}`;
  const accented = `é ${LONG}`;
  const raw = body(JSON.stringify({ model: "m", prompt: ascii, parts: [accented, "short"] }));
  const { value, strings } = parseJsonSkeleton(raw);
  const { prompt, parts } = value as { prompt: string; parts: string[] };
  assert.equal(typeof prompt, "string");
  assert.notEqual(prompt, ascii, "a placeholder stands in the skeleton");
  const piece = strings.piece(prompt);
  assert.ok(piece instanceof Uint8Array);
  assert.equal(Buffer.from(piece).toString("latin1"), ascii);
  assert.equal(strings.piece(parts[0]!), accented);
  assert.equal(strings.piece("short"), "short");
  assert.equal(strings.text(prompt), ascii);

  strings.resolveLazily();
  const holder = value as Record<string, unknown>;
  assert.equal(typeof Object.getOwnPropertyDescriptor(holder, "prompt")?.get, "function");
  assert.equal(holder.prompt, ascii);
  assert.deepEqual(Object.getOwnPropertyDescriptor(holder, "prompt"), {
    value: ascii,
    writable: true,
    enumerable: true,
    configurable: true,
  });
  assert.equal(JSON.stringify(value), raw.toString());
  holder.prompt = "rewritten";
  assert.equal(holder.prompt, "rewritten");
});
