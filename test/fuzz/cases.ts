/**
 * A seeded generator of malformed and hostile HTTP/1.1 requests, as raw bytes for a socket:
 * bodies (mutated, truncated, deeply nested, huge numbers, wrong types, invalid UTF-8, empty,
 * binary), headers (oversized, duplicated, invalid values, bogus content-length / transfer-encoding
 * combinations, a gzip content-encoding over a plain body), methods and paths (unknown, `..`,
 * percent-encoding, very long) and connections (half-closed or cut mid-request, pipelined, cut
 * mid-response). Shared by `npm run bench -- fuzz` and the fuzz tests; the same seed yields the
 * same cases.
 */
import { gzipSync } from "node:zlib";
import { seededRandom } from "../../src/core/random.ts";

type Random = () => number;

/** What the client does once the request bytes are written. */
export type FuzzEnd =
  /** Keep reading until the server closes (every complete case asks `connection: close`). */
  | "read"
  /** Half-close (FIN) after writing, then read until the server closes. */
  | "half-close"
  /** Reset the connection right after writing: no answer is expected. */
  | "destroy"
  /** Reset the connection once the first response bytes arrive (a client leaving mid-stream). */
  | "destroy-on-data";

/** One generated case. */
export interface FuzzCase {
  /** Group, for the report table ("body/truncated", "header/te-cl", …). */
  kind: string;
  /** Bytes written in order, each its own write. */
  chunks: Buffer[];
  end: FuzzEnd;
  /**
   * The bytes form at least one whole request (or a whole request head whose framing the server
   * must refuse), so the server must answer rather than wait: a case without an answer counts
   * as a hang.
   */
  answerExpected: boolean;
}

/** Paths each server routes POST requests on. */
export interface FuzzTarget {
  model: string;
  /** POST inference routes (the router's, or the simulator's). */
  paths: readonly string[];
}

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const int = (random: Random, max: number) => Math.floor(random() * max);

function templates(model: string): Record<string, unknown>[] {
  return [
    { model, prompt: "hello there, how are you today? ".repeat(4), max_tokens: 8 },
    { model, prompt: [1, 2, 3, 4, 5], max_tokens: 4, stream: true },
    {
      model,
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 6,
      stream: true,
      stream_options: { include_usage: true },
    },
    {
      model,
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: [{ type: "text", text: "x" }] },
      ],
      stop: ["a"],
      temperature: 0.5,
      top_p: 0.9,
      n: 1,
      seed: 3,
      max_completion_tokens: 5,
    },
    {
      model,
      input: [{ role: "user", content: [{ type: "input_text", text: "hi" }] }],
      instructions: "be brief",
      max_output_tokens: 4,
      stream: true,
    },
  ];
}

const FIELDS = [
  "model",
  "prompt",
  "messages",
  "max_tokens",
  "max_completion_tokens",
  "n",
  "stream",
  "stream_options",
  "stop",
  "temperature",
  "top_p",
  "seed",
  "ignore_eos",
  "cache_salt",
  "input",
  "instructions",
  "previous_response_id",
  "tools",
  "logprobs",
  "priority",
  "user",
];

const HUGE_NUMBERS = [
  "1e309",
  "-1e309",
  "123456789012345678901234567890",
  "-9007199254740993",
  "1e-400",
  "-0",
  "0.0000000000000000000001",
  "4294967296",
  "2147483648",
  "1".repeat(400),
  "0x10",
  "NaN",
  "Infinity",
  "1.5",
  "-1",
];

function wrongValue(random: Random, model: string, depth = 0): unknown {
  const roll = int(random, depth > 2 ? 10 : 13);
  switch (roll) {
    case 0:
      return null;
    case 1:
      return random() < 0.5;
    case 2:
      return Math.floor((random() - 0.3) * 10 ** int(random, 14));
    case 3:
      return random() * 200 - 100;
    case 4:
      return "x".repeat(int(random, 50));
    case 5:
      return model;
    case 6:
      return "";
    case 7:
      return pick(random, ["user", "assistant", "system", "tool", "developer", "wizard", "text"]);
    case 8:
      return "\u0000\ud800\uffff\u202e";
    case 9:
      return {};
    case 10:
      return Array.from({ length: int(random, 4) }, () => wrongValue(random, model, depth + 1));
    default:
      return {
        role: wrongValue(random, model, depth + 1),
        content: wrongValue(random, model, depth + 1),
        type: wrongValue(random, model, depth + 1),
        text: wrongValue(random, model, depth + 1),
      };
  }
}

/** A JSON body, mostly close to a valid one; `variant` names what was done to it. */
function body(random: Random, model: string): { variant: string; bytes: Buffer } {
  const base = structuredClone(pick(random, templates(model)));
  const roll = int(random, 11);
  if (roll <= 2) {
    for (let m = 1 + int(random, 3); m > 0; m--) {
      const key = pick(random, FIELDS);
      if (random() < 0.25) delete base[key];
      else base[key] = wrongValue(random, model);
    }
    return { variant: "mutated", bytes: Buffer.from(JSON.stringify(base)) };
  }
  if (roll === 3) {
    const text = JSON.stringify(base);
    return { variant: "truncated", bytes: Buffer.from(text.slice(0, int(random, text.length))) };
  }
  if (roll === 4) {
    const depth = pick(random, [64, 1000, 10_000, 100_000, 1_000_000]);
    const [open, close] = random() < 0.5 ? ["[", "]"] : ['{"a":', "}"];
    const nested = open.repeat(depth) + (random() < 0.8 ? "1" + close.repeat(depth) : "");
    const where = pick(random, ["prompt", "messages", "stop", "body", "content"]);
    let text: string;
    if (where === "body") text = nested;
    else if (where === "content")
      text = JSON.stringify({ ...base, messages: [{ role: "user", content: 0 }] }).replace(
        '"content":0',
        `"content":${nested}`,
      );
    else text = JSON.stringify({ ...base, [where]: 0 }).replace(`"${where}":0`, `"${where}":${nested}`);
    return { variant: "deep", bytes: Buffer.from(text) };
  }
  if (roll === 5) {
    const field = pick(random, [
      "max_tokens",
      "max_completion_tokens",
      "max_output_tokens",
      "n",
      "temperature",
      "top_p",
      "seed",
      "priority",
      "prompt",
    ]);
    const value = pick(random, HUGE_NUMBERS);
    const text = JSON.stringify({ ...base, [field]: 0 }).replace(`"${field}":0`, `"${field}":${value}`);
    return { variant: "huge-number", bytes: Buffer.from(text) };
  }
  if (roll === 6) {
    // Every field, one wrong type each.
    const field = pick(random, [...Object.keys(base), ...FIELDS]);
    for (const value of [null, true, 7, -7.5, "s", [], {}, [null], [{}], [[1]]].slice(int(random, 10))) {
      base[field] = value;
      break;
    }
    return { variant: "wrong-type", bytes: Buffer.from(JSON.stringify(base)) };
  }
  if (roll === 7) {
    const bad = pick(random, [
      Buffer.from([0xff, 0xfe]),
      Buffer.from([0xc0, 0x80]),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from([0xf4, 0x90, 0x80, 0x80]),
      Buffer.from([0xe2, 0x82]),
      Buffer.from([0x80]),
      Buffer.from("\\ud800"),
      Buffer.from("\\udfff\\ud800"),
      Buffer.from("\\u0000"),
    ]);
    const text = JSON.stringify({ ...base, prompt: "AB", messages: [{ role: "user", content: "AB" }] });
    const at = text.indexOf("AB") + 1;
    const bytes = Buffer.concat([Buffer.from(text.slice(0, at)), bad, Buffer.from(text.slice(at))]);
    return { variant: "invalid-utf8", bytes };
  }
  if (roll === 8) {
    return {
      variant: "empty",
      bytes: Buffer.from(pick(random, ["", " ", "null", "[]", '""', "0", "{}", "\n", "true", '{"":1}'])),
    };
  }
  if (roll === 9) {
    return {
      variant: "binary",
      bytes: Buffer.from(Array.from({ length: 1 + int(random, 300) }, () => int(random, 256))),
    };
  }
  // Valid (as far as the template goes): the control group, also exercised by the framing cases.
  return { variant: "valid", bytes: Buffer.from(JSON.stringify(base)) };
}

function head(
  method: string,
  path: string,
  headers: readonly (readonly [string, string])[],
  version = "HTTP/1.1",
): string {
  return `${method} ${path} ${version}\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`;
}

const JSON_HEADERS = (length: number): [string, string][] => [
  ["host", "127.0.0.1"],
  ["content-type", "application/json"],
  ["content-length", String(length)],
  ["connection", "close"],
];

function bodyCase(random: Random, target: FuzzTarget): FuzzCase {
  const { variant, bytes } = body(random, target.model);
  const path = pick(random, target.paths);
  const chunks = [Buffer.from(head("POST", path, JSON_HEADERS(bytes.length))), bytes];
  // Some valid streams are left mid-response, as a client that goes away.
  const end: FuzzEnd = random() < 0.1 ? "destroy-on-data" : "read";
  return { kind: `body/${variant}`, chunks, end, answerExpected: end === "read" };
}

const ROUTER_HEADERS = [
  "x-request-id",
  "x-llm-d-inference-objective",
  "x-llm-d-inference-fairness-id",
  "x-gateway-model-name-rewrite",
  "x-llm-d-model-name-rewrite",
  "x-slo-ttft-ms",
  "x-llm-d-slo-ttft-ms",
  "x-session-id",
  "authorization",
  "accept",
  "accept-encoding",
  "content-type",
  "expect",
  "upgrade",
  "te",
  "trailer",
  "connection",
];

const HEADER_VALUES = [
  "",
  " ",
  "-1",
  "1e309",
  "NaN",
  "99999999999999999999",
  "x".repeat(5000),
  "\u00ff\u00fe",
  "a, b, c",
  "../../etc/passwd",
  "%00",
  "null",
  "close, upgrade",
  "100-continue",
  "websocket",
  "chunked",
  "text/plain",
  "application/json; charset=latin1",
  "multipart/form-data; boundary=x",
];

function headerCase(random: Random, target: FuzzTarget): FuzzCase {
  const valid = Buffer.from(JSON.stringify(templates(target.model)[0]));
  const path = pick(random, target.paths);
  const roll = int(random, 8);
  const L = valid.length;
  const base = (): [string, string][] => [
    ["host", "127.0.0.1"],
    ["content-type", "application/json"],
    ["connection", "close"],
  ];
  const whole = (
    kind: string,
    headers: readonly (readonly [string, string])[],
    bodyBytes: Buffer = valid,
    end: FuzzEnd = "read",
  ) => ({
    kind,
    chunks: [Buffer.from(head("POST", path, headers), "latin1"), bodyBytes],
    end,
    answerExpected: true,
  });
  if (roll === 0) {
    // Oversized: one header past node's 16 KiB limit, or very many headers.
    const headers = [...base(), ["content-length", String(L)] as [string, string]];
    if (random() < 0.5) headers.push(["x-big", "y".repeat(pick(random, [8_000, 17_000, 70_000]))]);
    else for (let i = 0, n = pick(random, [200, 2000, 5000]); i < n; i++) headers.push([`x-h${i}`, "v"]);
    return whole("header/oversized", headers);
  }
  if (roll === 1) {
    // Duplicated: a router-relevant header twice (or the framing ones, with equal values).
    const name = pick(random, [...ROUTER_HEADERS, "host", "content-type"]);
    const headers: [string, string][] = [...base(), ["content-length", String(L)], [name, "a"], [name, "b"]];
    if (random() < 0.3) headers.push(["content-length", String(L)]);
    return whole("header/duplicated", headers);
  }
  if (roll === 2) {
    // Odd or invalid values in the headers the servers read.
    const name = pick(random, ROUTER_HEADERS);
    let value = pick(random, HEADER_VALUES);
    if (random() < 0.2) value = String.fromCharCode(...Array.from({ length: 8 }, () => 1 + int(random, 255)));
    const headers: [string, string][] = [
      ...base().filter(([k]) => k !== name),
      ["content-length", String(L)],
      [name, value],
    ];
    return whole("header/invalid-value", headers);
  }
  if (roll === 3) {
    // Bogus content-length.
    const value = pick(random, [
      "-1",
      "abc",
      "1e3",
      `${L}, ${L + 1}`,
      " ",
      "0x10",
      "99999999999999999999",
      `+${L}`,
      `${L}.0`,
    ]);
    return whole("header/bad-content-length", [...base(), ["content-length", value]]);
  }
  if (roll === 4) {
    // Two content-lengths that disagree, or content-length with transfer-encoding.
    if (random() < 0.4)
      return whole("header/cl-cl", [
        ...base(),
        ["content-length", String(L)],
        ["content-length", String(L - 3)],
      ]);
    const te = pick(random, [
      "chunked",
      "gzip, chunked",
      "chunked, gzip",
      "identity",
      "Chunked",
      " chunked",
      "xchunked",
    ]);
    const chunked = Buffer.from(`${L.toString(16)}\r\n${valid.toString()}\r\n0\r\n\r\n`);
    return whole(
      "header/cl-te",
      [...base(), ["content-length", String(L)], ["transfer-encoding", te]],
      random() < 0.5 ? chunked : valid,
    );
  }
  if (roll === 5) {
    // Chunked bodies, well and badly framed.
    const text = valid.toString();
    const frames = [
      `${L.toString(16)}\r\n${text}\r\n0\r\n\r\n`,
      `${L.toString(16)};ext=1\r\n${text}\r\n0\r\nx-trailer: 1\r\n\r\n`,
      `zz\r\n${text}\r\n0\r\n\r\n`,
      `${(L + 10).toString(16)}\r\n${text}\r\n0\r\n\r\n`,
      `${L.toString(16)}\r\n${text}0\r\n\r\n`,
      `ffffffffffffffffff\r\n${text}\r\n0\r\n\r\n`,
      `-1\r\n${text}\r\n0\r\n\r\n`,
      `${L.toString(16)}\n${text}\n0\n\n`,
    ];
    const te = pick(random, ["chunked", "chunked", "gzip", "identity, chunked", "chunked, chunked"]);
    // Framing the parser cannot finish waits for more: half-close so the server sees the end.
    return whole(
      "header/chunked",
      [...base(), ["transfer-encoding", te]],
      Buffer.from(pick(random, frames)),
      "half-close",
    );
  }
  if (roll === 6) {
    // content-encoding that does not match the body (or does: neither server inflates bodies).
    const encoding = pick(random, ["gzip", "deflate", "br", "zstd", "gzip, gzip", "x-unknown"]);
    const bodyBytes = random() < 0.3 ? gzipSync(valid) : valid;
    return whole(
      "header/content-encoding",
      [...base(), ["content-length", String(bodyBytes.length)], ["content-encoding", encoding]],
      bodyBytes,
    );
  }
  // Header syntax node must reject: bare LF, spaces in names, no colon, obs-fold, NUL, non-ASCII names.
  const line = pick(random, [
    "x-a b: c",
    "no-colon",
    ": empty-name",
    "x-fold: a\r\n continued",
    "x-nul: a\u0000b",
    "x-\u00e9: c",
    "x-cr: a\rb",
    "content-length : 5",
  ]);
  const raw = `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nconnection: close\r\n${line}\r\ncontent-length: ${L}\r\n\r\n`;
  return {
    kind: "header/syntax",
    chunks: [Buffer.from(raw, "latin1"), valid],
    end: "half-close",
    answerExpected: true,
  };
}

function pathCase(random: Random, target: FuzzTarget): FuzzCase {
  const inference = pick(random, target.paths);
  const method = pick(random, [
    "GET",
    "POST",
    "PUT",
    "DELETE",
    "PATCH",
    "HEAD",
    "OPTIONS",
    "TRACE",
    "CONNECT",
    "PROPFIND",
    "FOO",
    "get",
    "M-SEARCH",
    "POST ",
    "P\u00d6ST",
    "X".repeat(300),
  ]);
  const path = pick(random, [
    inference,
    `${inference}/`,
    `/${inference}`,
    `${inference}?a=1&a=2&%zz=%`,
    `${inference}#frag`,
    "/v1/../v1/completions",
    "/v1/%2e%2e/v1/completions",
    "/../../../../etc/passwd",
    "/%2e%2e/%2e%2e/etc/passwd",
    "/v1/completions%00",
    "/v1/%63ompletions",
    "/v1/responses/..%2f..%2f",
    "/v1/responses/resp_%00",
    "/v1/responses/x/input_items?limit=-1&order=sideways&after=%ff",
    "/v1/responses/x/cancel",
    "/metrics?x=%",
    "/health/../metrics",
    "*",
    "http://127.0.0.1/v1/completions",
    "//evil.example/v1/completions",
    "/%",
    "/\u00e9",
    "/a\\b",
    `/${"a/".repeat(2000)}`,
    `/v1/completions?${"q=1&".repeat(4000)}`,
    `/${"x".repeat(pick(random, [1000, 9000, 20_000, 100_000]))}`,
  ]);
  const version =
    random() < 0.9 ? "HTTP/1.1" : pick(random, ["HTTP/1.0", "HTTP/2.0", "HTTP/0.9", "HTTP/1.1x", "HTTP/9.9"]);
  const bodyBytes =
    method === "GET" || method === "HEAD"
      ? Buffer.alloc(0)
      : Buffer.from(JSON.stringify(templates(target.model)[0]));
  const headers: [string, string][] = [
    ["host", "127.0.0.1"],
    ["content-type", "application/json"],
    ["content-length", String(bodyBytes.length)],
    ["connection", "close"],
  ];
  return {
    kind: "path/method",
    chunks: [Buffer.from(head(method, path, headers, version), "latin1"), bodyBytes],
    // Odd versions may leave node waiting: the FIN ends them either way.
    end: "half-close",
    answerExpected: true,
  };
}

function connectionCase(random: Random, target: FuzzTarget): FuzzCase {
  const valid = Buffer.from(JSON.stringify(pick(random, templates(target.model))));
  const path = pick(random, target.paths);
  const request = Buffer.concat([Buffer.from(head("POST", path, JSON_HEADERS(valid.length))), valid]);
  const roll = int(random, 7);
  if (roll === 0) {
    // Part of the head, then FIN.
    return {
      kind: "conn/partial-head-fin",
      chunks: [request.subarray(0, 1 + int(random, request.indexOf("\r\n\r\n")))],
      end: "half-close",
      answerExpected: false,
    };
  }
  if (roll === 1) {
    // The whole head and part of the body, then FIN.
    const split = request.indexOf("\r\n\r\n") + 4 + int(random, valid.length);
    return {
      kind: "conn/partial-body-fin",
      chunks: [request.subarray(0, split)],
      end: "half-close",
      answerExpected: false,
    };
  }
  if (roll === 2) {
    // Cut mid-body (RST).
    const split = request.indexOf("\r\n\r\n") + 4 + int(random, valid.length);
    return {
      kind: "conn/reset-mid-body",
      chunks: [request.subarray(0, split)],
      end: "destroy",
      answerExpected: false,
    };
  }
  if (roll === 3) {
    // Cut mid-head (RST).
    return {
      kind: "conn/reset-mid-head",
      chunks: [request.subarray(0, 1 + int(random, request.indexOf("\r\n\r\n")))],
      end: "destroy",
      answerExpected: false,
    };
  }
  if (roll === 4) {
    // Several requests pipelined on one connection, some malformed; the last asks to close.
    const parts: Buffer[] = [];
    for (let i = 0, n = 2 + int(random, 4); i < n; i++) {
      const last = i === n - 1;
      const { bytes } = body(random, target.model);
      const headers: [string, string][] = [
        ["host", "127.0.0.1"],
        ["content-type", "application/json"],
        ["content-length", String(bytes.length)],
        ["connection", last ? "close" : "keep-alive"],
      ];
      const method = random() < 0.2 ? "GET" : "POST";
      const p =
        random() < 0.2 ? pick(random, ["/health", "/v1/models", "/nope"]) : pick(random, target.paths);
      parts.push(Buffer.from(head(method, p, headers)), bytes);
    }
    const all = Buffer.concat(parts);
    // Sometimes in odd slices, as a slow client's packets.
    const chunks: Buffer[] = [];
    if (random() < 0.5 || all.length > 64 * 1024)
      chunks.push(all); // (multi-MB in 100-byte slices outlasts the client timeout)
    else
      for (let at = 0; at < all.length; ) {
        const step = 1 + int(random, 200);
        chunks.push(all.subarray(at, at + step));
        at += step;
      }
    return { kind: "conn/pipelined", chunks, end: "read", answerExpected: true };
  }
  if (roll === 5) {
    // A whole request followed by garbage, or another protocol entirely.
    const garbage = pick(random, [
      Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
      Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03]),
      Buffer.from("\r\n\r\n\r\n"),
      Buffer.from(Array.from({ length: 64 }, () => int(random, 256))),
    ]);
    const alone = random() < 0.5;
    return {
      kind: "conn/garbage",
      chunks: alone ? [garbage] : [request, garbage],
      end: "half-close",
      answerExpected: !alone,
    };
  }
  // A valid streaming request, left as soon as the answer starts.
  const stream = Buffer.from(
    JSON.stringify({
      model: target.model,
      prompt: "leave me",
      max_tokens: 50,
      ignore_eos: true,
      stream: true,
    }),
  );
  return {
    kind: "conn/leave-mid-stream",
    chunks: [Buffer.from(head("POST", path, JSON_HEADERS(stream.length))), stream],
    end: "destroy-on-data",
    answerExpected: false,
  };
}

/** The `i`-th… `count` cases for `seed`: about half bodies, the rest headers, paths and connections. */
export function* fuzzCases(seed: number, count: number, target: FuzzTarget): Generator<FuzzCase> {
  const random = seededRandom(seed);
  for (let i = 0; i < count; i++) {
    const roll = random();
    if (roll < 0.45) yield bodyCase(random, target);
    else if (roll < 0.7) yield headerCase(random, target);
    else if (roll < 0.82) yield pathCase(random, target);
    else yield connectionCase(random, target);
  }
}
