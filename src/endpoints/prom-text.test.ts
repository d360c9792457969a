import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { labelsMatch, parseSampleValue, readLabel, scanSamples } from "./prom-text.ts";

const vllmPage = readFileSync(new URL("./testdata/vllm-metrics.txt", import.meta.url), "utf8");
const sglangPage = readFileSync(new URL("./testdata/sglang-metrics.txt", import.meta.url), "utf8");

interface Sample {
  name: string;
  labels: string;
  value: number;
}

function collect(text: string, names: string[]): { samples: Sample[]; malformed: number } {
  const samples: Sample[] = [];
  const malformed = scanSamples(text, names, (i, start, end, value) => {
    samples.push({ name: names[i]!, labels: text.slice(start, end), value });
  });
  return { samples, malformed };
}

describe("scanSamples", () => {
  it("finds only the asked families in a vLLM page, not their histogram series or longer names", () => {
    const names = ["vllm:num_requests_waiting", "vllm:time_to_first_token_seconds"];
    const { samples, malformed } = collect(vllmPage, names);
    assert.equal(malformed, 0);
    assert.deepEqual(
      samples.map((s) => [s.name, s.value]),
      [["vllm:num_requests_waiting", 4]],
    );
  });

  it("reads histogram bucket lines including le=+Inf when asked for the _bucket family", () => {
    const { samples } = collect(vllmPage, ["vllm:time_to_first_token_seconds_bucket"]);
    assert.deepEqual(
      samples.map((s) => s.value),
      [0, 12, 15],
    );
    assert.equal(readLabel(vllmPage, 0, 0, "le"), undefined);
    const last = samples[2]!;
    assert.equal(readLabel(last.labels, 0, last.labels.length, "le"), "+Inf");
  });

  it("parses SGLang values including NaN", () => {
    const { samples } = collect(sglangPage, ["sglang:token_usage", "sglang:gen_throughput"]);
    assert.equal(samples[0]!.value, 0.71);
    assert.ok(Number.isNaN(samples[1]!.value));
  });

  it("keeps commas, braces and escaped quotes inside quoted label values", () => {
    const text = 'm{a="x,y}",b="say \\"hi\\"",c="back\\\\slash\\nnl"} 5 1700000000000\n';
    const { samples, malformed } = collect(text, ["m"]);
    assert.equal(malformed, 0);
    const { labels } = samples[0]!;
    assert.equal(samples[0]!.value, 5);
    assert.equal(readLabel(labels, 0, labels.length, "a"), "x,y}");
    assert.equal(readLabel(labels, 0, labels.length, "b"), 'say "hi"');
    assert.equal(readLabel(labels, 0, labels.length, "c"), "back\\slash\nnl");
    assert.equal(readLabel(labels, 0, labels.length, "d"), undefined);
  });

  it("handles unlabelled samples, CRLF line ends, blank lines and a missing final newline", () => {
    const text = "\r\n# TYPE m gauge\r\nm 1.5\r\n\r\n  m{} -2e-3\r\nm +Inf";
    const { samples, malformed } = collect(text, ["m"]);
    assert.equal(malformed, 0);
    assert.deepEqual(
      samples.map((s) => s.value),
      [1.5, -0.002, Number.POSITIVE_INFINITY],
    );
  });

  it("counts malformed lines of wanted families and skips them", () => {
    const text = 'm{a="unterminated} 1\nm notanumber\nm\nm{a="ok"} 3\nother garbage here\n';
    const { samples, malformed } = collect(text, ["m"]);
    assert.equal(malformed, 3);
    assert.deepEqual(
      samples.map((s) => s.value),
      [3],
    );
  });
});

describe("parseSampleValue", () => {
  const table: [string, number | undefined][] = [
    ["0", 0],
    ["1e+09", 1e9],
    ["+Inf", Number.POSITIVE_INFINITY],
    ["-Inf", Number.NEGATIVE_INFINITY],
    ["x1", undefined],
  ];
  for (const [token, expected] of table) {
    it(`parses ${token}`, () => assert.equal(parseSampleValue(token), expected));
  }
  it("parses NaN", () => assert.ok(Number.isNaN(parseSampleValue("NaN"))));
});

describe("labelsMatch", () => {
  const labels = 'request_type="waiting",model="m"';
  it("matches when every pair is equal", () => {
    assert.equal(labelsMatch(labels, 0, labels.length, [["request_type", "waiting"]]), true);
    assert.equal(
      labelsMatch(labels, 0, labels.length, [
        ["request_type", "waiting"],
        ["model", "x"],
      ]),
      false,
    );
  });
});
