/**
 * The P/D KV-transfer time model, shared by `llmd sim` and the fleet simulator: a decode replica
 * pulling a prefill's KV pays one link latency plus the bytes one GPU moves over its own link
 * (tensor-parallel ranks pull their KV heads in parallel, each over its own NIC or NVLink port).
 * Bytes per token come from the model profile (K and V, all layers, bf16, the KV heads one GPU holds).
 */
import type { ResolvedEngineOptions } from "./options.ts";

/** A link between a prefill and a decode GPU: bandwidth per GPU and direction, and a fixed latency. */
export interface KvLink {
  /** GB/s (1e9 bytes per second) one GPU sends or receives. */
  gbps: number;
  /** Fixed cost of one transfer (handshake, completion notification), ms. */
  latencyMs: number;
}

/** Names of the link presets (`--kv-transfer-link`). */
export const KV_LINK_NAMES = ["nvlink", "infiniband", "roce", "tcp"] as const;

/** One of {@link KV_LINK_NAMES}. */
export type KvLinkName = (typeof KV_LINK_NAMES)[number];

/**
 * Link presets, nominal line rates per GPU (sources in docs/simulator.md#kv-transfer-pd):
 * NVLink 4 on H200 (900 GB/s bidirectional), one 400 Gb/s NDR InfiniBand or RoCE NIC per GPU
 * (ConnectX-7, as in DGX H200), and 100 GbE TCP.
 */
export const KV_LINKS: Readonly<Record<KvLinkName, KvLink>> = {
  nvlink: { gbps: 450, latencyMs: 0.005 },
  infiniband: { gbps: 50, latencyMs: 0.01 },
  roce: { gbps: 50, latencyMs: 0.02 },
  tcp: { gbps: 12.5, latencyMs: 0.1 },
};

/** The KV size of one transfer. */
export interface KvTransferSize {
  tokens: number;
  /** Bytes over all tensor-parallel ranks. */
  bytes: number;
  /** Bytes one GPU moves. */
  bytesPerGpu: number;
}

/** KV bytes of `tokens` tokens of the engine's model, per GPU and over all its ranks. */
export function kvTransferSize(options: ResolvedEngineOptions, tokens: number): KvTransferSize {
  const perGpu = (options.blockBytes / options.blockSize) * tokens;
  return { tokens, bytes: perGpu * options.profile.model.tp, bytesPerGpu: perGpu };
}

/** Milliseconds to move `size` over `link`. */
export function kvTransferMs(size: KvTransferSize, link: KvLink): number {
  return link.latencyMs + size.bytesPerGpu / (link.gbps * 1e6);
}

/**
 * A digest of a prompt's token ids (FNV-1a, 32-bit, hex), so a decode can tell that the KV it
 * pulled was computed for its own prompt.
 */
export function promptDigest(tokens: Uint32Array): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < tokens.length; i++) {
    let t = tokens[i]!;
    for (let k = 0; k < 4; k++) {
      h ^= t & 0xff;
      h = Math.imul(h, 0x01000193);
      t >>>= 8;
    }
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}
