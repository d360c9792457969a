/**
 * One server's P/D KV transfer (`--kv-transfer-config`): which legs it takes (its `kv_role`), the
 * KV its prefill legs hold (src/sim/kv-holds.ts, with the side channel), the pulls its decode legs
 * make (src/sim/kv-pull.ts), and the metrics of both, including the
 * `llmd_sim_kv_transfer_config_info{kv_connector,kv_role,engine_id}` info gauge.
 */
import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { LlmdError } from "../api/errors.ts";
import { KV_LINKS, type KvLink, type PagedEngine } from "../engine/index.ts";
import type { SimConfig } from "./config.ts";
import { KvHolds, startSideChannel } from "./kv-holds.ts";
import { KvPuller, PULL_FAILURES, type PullResult } from "./kv-pull.ts";
import { type KvTransferConfig, servesDecodeLeg, servesPrefillLeg } from "./kv-transfer-config.ts";
import type { RemoteKv, TransferLeg } from "./kv-transfer-params.ts";

const DURATION_BUCKETS = [0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** The link `config` asks for: the preset, with the bandwidth and latency overrides applied. */
export function kvLinkOf(config: SimConfig): KvLink {
  const preset = KV_LINKS[config["kv-transfer-link"]];
  return {
    gbps: config["kv-transfer-bandwidth"] ?? preset.gbps,
    latencyMs: config["kv-transfer-link-latency"] ?? preset.latencyMs,
  };
}

/** The transfer side of one simulator server. */
export class KvTransferAgent {
  readonly engineId: string;
  readonly holds: KvHolds;
  private readonly puller: KvPuller;
  /** The prefill's tensor-parallel size (`tp_size`). */
  private readonly tpSize: number;
  private sideChannel: Server | null = null;
  private host = "127.0.0.1";
  private port = 0;
  private readonly metrics: TransferMetrics;

  constructor(
    readonly transfer: KvTransferConfig,
    private readonly config: SimConfig,
    engine: PagedEngine,
    random: () => number,
    registry: Registry,
  ) {
    this.engineId = transfer.engineId ?? randomUUID();
    this.tpSize = engine.options.profile.model.tp;
    this.holds = new KvHolds(engine, this.engineId, config["kv-abort-timeout"] / config.speed);
    const failureRate = config["kv-transfer-failure-rate"];
    this.puller = new KvPuller(engine.options, kvLinkOf(config), failureRate, random);
    this.metrics = registerMetrics(registry, this, () => engine.stats().heldBlocks);
  }

  /** Opens the side channel; `host` is the server's own address, used unless a side-channel host is set. */
  async start(host: string): Promise<void> {
    this.host = this.config["kv-side-channel-host"] ?? host;
    const bind = this.config.host;
    const opened = await startSideChannel(this.holds, bind, this.config["kv-side-channel-port"]).catch(
      (err: Error) => {
        throw new LlmdError("invalid_option", `--kv-side-channel-port: cannot listen: ${err.message}`);
      },
    );
    this.sideChannel = opened.server;
    this.port = opened.port;
  }

  /** Frees every hold and closes the side channel. */
  close(): void {
    this.holds.clear();
    this.sideChannel?.close();
    this.sideChannel?.closeAllConnections();
  }

  /** A 400 when this server's role does not take `leg`, else null. */
  refusal(leg: TransferLeg): LlmdError | null {
    const role = this.transfer.role;
    if (leg.kind === "prefill" && !servesPrefillLeg(role))
      return new LlmdError(
        "invalid_request",
        `kv_role ${role} does not serve prefill legs (do_remote_decode)`,
        {
          param: "kv_transfer_params.do_remote_decode",
        },
      );
    if (leg.kind === "decode" && !servesDecodeLeg(role))
      return new LlmdError(
        "invalid_request",
        `kv_role ${role} does not serve decode legs (do_remote_prefill)`,
        {
          param: "kv_transfer_params.do_remote_prefill",
        },
      );
    return null;
  }

  /** Holds a finished prefill leg's KV; returns the `kv_transfer_params` of its response. */
  hold(requestId: string, prompt: Uint32Array): Record<string, unknown> {
    const blockIds = this.holds.hold(requestId, prompt);
    return {
      do_remote_prefill: true,
      do_remote_decode: false,
      remote_engine_id: this.engineId,
      remote_block_ids: blockIds,
      remote_host: this.host,
      remote_port: this.port,
      remote_request_id: requestId,
      tp_size: this.tpSize,
    };
  }

  /** Pulls a decode leg's KV (`localTokens` already cached here), counting the transfer or the failure. */
  async pull(remote: RemoteKv, prompt: Uint32Array, localTokens: number): Promise<PullResult> {
    const result = await this.puller.pull(remote, prompt, localTokens);
    const m = this.metrics;
    if (result.ok) {
      m.transfers.inc();
      m.bytes.inc(result.size.bytes);
      m.durations.observe(result.transferMs / 1000);
    } else m.failures.inc({ reason: result.reason });
    return result;
  }

  /** Counts a decode leg that recomputed the prefill locally after a failed pull. */
  fellBack(): void {
    this.metrics.fallbacks.inc();
  }
}

/** The counters a server's transfers update. */
interface TransferMetrics {
  transfers: Counter;
  bytes: Counter;
  durations: Histogram;
  failures: Counter<"reason">;
  fallbacks: Counter;
}

/** Registers the transfer metrics of `agent`; `heldBlocks` reads the engine's held-block gauge. */
function registerMetrics(
  registry: Registry,
  agent: KvTransferAgent,
  heldBlocks: () => number,
): TransferMetrics {
  const registers = [registry];
  const { transfer, engineId } = agent;
  const labels = { kv_connector: transfer.connector, kv_role: transfer.role, engine_id: engineId };
  new Gauge({
    name: "llmd_sim_kv_transfer_config_info",
    help: "The server's KV transfer configuration (--kv-transfer-config); the value is 1.",
    labelNames: ["kv_connector", "kv_role", "engine_id"],
    registers,
  }).set(labels, 1);
  const transfers = counter(registry, "llmd_sim_kv_transfers_total", "KV transfers a decode leg pulled.");
  const bytes = counter(registry, "llmd_sim_kv_transfer_bytes_total", "KV bytes pulled (all TP ranks).");
  const durations = new Histogram({
    name: "llmd_sim_kv_transfer_duration_seconds",
    help: "Transfer time of each pull (engine time): link latency + bytes per GPU / bandwidth.",
    buckets: DURATION_BUCKETS,
    registers,
  });
  const failures = new Counter<"reason">({
    name: "llmd_sim_kv_transfer_failures_total",
    help: "Pulls that failed, by reason.",
    labelNames: ["reason"],
    registers,
  });
  for (const reason of PULL_FAILURES) failures.inc({ reason }, 0);
  const fallbacks = counter(
    registry,
    "llmd_sim_kv_transfer_fallbacks_total",
    "Decode legs that recomputed the prefill locally after a failed pull.",
  );
  const holds = agent.holds.counters;
  new Gauge({
    name: "llmd_sim_kv_blocks_held",
    help: "GPU KV blocks finished prefill legs hold for a remote decode.",
    registers,
    collect() {
      this.set(heldBlocks());
    },
  });
  mirror(registry, "llmd_sim_kv_holds_pulled_total", "Holds a decode pulled.", () => holds.pulled);
  mirror(
    registry,
    "llmd_sim_kv_holds_expired_total",
    "Holds freed by the abort timeout.",
    () => holds.expired,
  );
  mirror(
    registry,
    "llmd_sim_kv_pulls_refused_total",
    "Pulls refused (stale engine id, blocks not held).",
    () => holds.refused,
  );
  return { transfers, bytes, durations, failures, fallbacks };
}

function counter(registry: Registry, name: string, help: string): Counter {
  return new Counter({ name, help, registers: [registry] });
}

/** A counter whose value is `read()` at scrape time. */
function mirror(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}
