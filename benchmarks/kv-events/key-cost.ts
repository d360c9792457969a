/**
 * CPU nanoseconds a token of the precise index's two per-block hashes over a prompt: the request
 * key (llm-d's CBOR-FNV, what a key the index does not hold costs) and the derivation digest (what
 * finding a held key by its parent and tokens costs). Trees without the digest get its row blank.
 */
import * as requestKeys from "../../src/kv-index/request-keys.ts";
import { cpuMicros } from "./held-conversation.ts";
import { tokenStream } from "./token-stream.ts";

const BLOCK = 64;
/** Folds every digest, so none is optimised away. */
let _sink = 0;

/** One row per hash over `tokens` tokens, each repeated until it has run `rounds` times. */
export function keyCostRows(
  tokens: number,
  model: string,
  rounds: number,
): Record<string, string | number>[] {
  const prompt = tokenStream(42, tokens);
  const hasher = new requestKeys.RequestKeyHasher(BLOCK);
  const perToken = (fn: () => void) => {
    fn(); // warm-up
    const micros = cpuMicros(() => {
      for (let r = 0; r < rounds; r++) fn();
    });
    return +((micros * 1000) / (rounds * tokens)).toFixed(1);
  };
  const rows: Record<string, string | number>[] = [
    { hash: "request key (CBOR-FNV)", tokens, "ns CPU / token": perToken(() => hasher.keys(prompt, model)) },
  ];
  const parent = hasher.root(model);
  const digest = "blockDerivation" in requestKeys ? requestKeys.blockDerivation : undefined;
  rows.push({
    hash: "derivation digest",
    tokens,
    "ns CPU / token": digest
      ? perToken(() => {
          for (let from = 0; from + BLOCK <= tokens; from += BLOCK)
            _sink ^= digest(parent, prompt, from, BLOCK);
        })
      : "–",
  });
  return rows;
}
