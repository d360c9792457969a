/**
 * P/D in the fleet simulator (xPyD): a request the scheduler sent to a decode replica with
 * `x-prefiller-host-port` runs its two legs as `llmd sidecar` and `llmd sim` do over HTTP. The
 * prefill leg (one output token, KV held on finishing) runs on the prefill replica's engine; the
 * decode pulls the held KV, paying the shared transfer model (src/engine/kv-transfer.ts), and
 * runs with those prompt tokens already computed on the decode replica's engine.
 *
 * Faults, each with its defined outcome, so no request is lost and no block leaks:
 * - a transfer failure (injected at `transferFailureRate`): the held KV is released and the decode
 *   recomputes the prefill locally (a fallback, as vLLM's `kv_load_failure_policy: recompute`);
 * - the prefill replica dies during the prefill leg: the leg is sent again to the restarted
 *   replica (as the router-run legs place a failed prefill again; no silent local prefill); after
 *   it (KV held, transfer pending): the pull finds a new engine (stale metadata) and the decode
 *   recomputes locally, as vLLM does when a load fails;
 * - the decode replica dies before its decode leg started: the request is placed again (the host's
 *   retry, as for any request that had not answered); a prefill leg still running is aborted, KV
 *   already held is freed by the abort timeout (`abortTimeoutMs`, VLLM_NIXL_ABORT_REQUEST_TIMEOUT).
 */
import {
  type EngineRequest,
  type KvLink,
  kvTransferMs,
  kvTransferSize,
  type ResolvedEngineOptions,
  type StepOutput,
} from "../engine/index.ts";
import type { Replica } from "./replica.ts";

/** P/D settings of a fleet run. */
export interface PdOptions {
  /** The replicas' engine options (bytes per token of the model). */
  engine: ResolvedEngineOptions;
  link: KvLink;
  /** Fraction (0..1) of transfers that fail. */
  transferFailureRate: number;
  /** Virtual ms held KV lives unpulled before the prefill frees it. */
  abortTimeoutMs: number;
  random: () => number;
}

/** What the P/D requests of a run did. */
export interface PdStats {
  /** Requests that ran a prefill leg. */
  requests: number;
  /** KV transfers that completed, their bytes (all TP ranks) and their durations (ms). */
  transfers: number;
  transferBytes: number;
  transferMs: number[];
  /** Injected transfer failures. */
  transferFailures: number;
  /** Pulls that found the prefill restarted (stale engine). */
  staleTransfers: number;
  /** Prefill legs lost with their replica and sent again. */
  prefillRetries: number;
  /** Prefill legs the engine refused (too long), run locally instead. */
  prefillRefused: number;
  /** Decode legs that recomputed the prefill locally, for any of the reasons above. */
  fallbacks: number;
  /** Held KV the abort timeout freed (its decode died). */
  holdsExpired: number;
  /** Requests whose decode replica died before their decode leg began (the host places them again). */
  decodeLost: number;
}

/** What the coordinator needs from the simulator. */
export interface PdHost {
  now(): number;
  /** Runs `fn` at virtual time `atMs`. */
  at(atMs: number, fn: () => void): void;
  /** Runs a step on `replica` if it is idle. */
  kick(replica: Replica): void;
  /** Starts the decode leg of request `id` on `replica` (the engine may refuse it). */
  startDecode(id: string, replica: Replica, request: EngineRequest): void;
  /** Ends request `id` with `failed-<reason>`. */
  fail(id: string, reason: string): void;
}

type Phase = "prefill" | "held" | "stranded" | "done";

interface PdRequest {
  id: string;
  legId: string;
  request: EngineRequest;
  prefill: Replica;
  prefillEpoch: number;
  decode: Replica;
  decodeEpoch: number;
  phase: Phase;
  heldAtMs: number;
  /** The prefill's cached tokens: what the sidecar reports as the response's `cached_tokens`. */
  prefillCached: number;
}

const LEG_PREFIX = "prefill:";

/** Runs the two legs of every P/D request of one fleet run. */
export class PdCoordinator {
  readonly stats: PdStats = {
    requests: 0,
    transfers: 0,
    transferBytes: 0,
    transferMs: [],
    transferFailures: 0,
    staleTransfers: 0,
    prefillRetries: 0,
    prefillRefused: 0,
    fallbacks: 0,
    holdsExpired: 0,
    decodeLost: 0,
  };
  private readonly legs = new Map<string, PdRequest>();
  /** Prefill legs sent so far: each gets its own engine id. */
  private sent = 0;
  /** Requests whose prefill's cached tokens replace the decode's in the record. */
  private readonly cachedOf = new Map<string, number>();

  constructor(
    private readonly o: PdOptions,
    private readonly host: PdHost,
  ) {}

  /** True while a prefill leg runs, KV is held or a transfer is pending. */
  get busy(): boolean {
    return this.legs.size > 0;
  }

  /** True when `outputId` is a prefill leg's. */
  owns(outputId: string): boolean {
    return outputId.startsWith(LEG_PREFIX);
  }

  /** Starts request `id`'s prefill leg on `prefill`; its decode leg will run on `decode`. */
  start(id: string, request: EngineRequest, prefill: Replica, decode: Replica): void {
    this.stats.requests++;
    this.sendPrefill(id, request, prefill, decode);
  }

  private sendPrefill(id: string, request: EngineRequest, prefill: Replica, decode: Replica): void {
    const legId = `${LEG_PREFIX}${this.sent++}:${id}`;
    const pd: PdRequest = {
      id,
      legId,
      request,
      prefill,
      prefillEpoch: prefill.epoch,
      decode,
      decodeEpoch: decode.epoch,
      phase: "prefill",
      heldAtMs: 0,
      prefillCached: 0,
    };
    const leg = { ...request, id: legId, maxTokens: 1, holdKvOnFinish: true };
    if (prefill.engine.add(leg, this.host.now())) {
      this.stats.prefillRefused++;
      this.fallBack(pd);
      return;
    }
    prefill.dispatched();
    this.legs.set(legId, pd);
    this.host.kick(prefill);
  }

  /** A prefill leg's step output. */
  prefillOutput(output: StepOutput): void {
    const pd = this.legs.get(output.id);
    if (pd?.phase !== "prefill" || !output.finished) return;
    pd.prefillCached = output.cachedTokens;
    pd.phase = "held";
    pd.heldAtMs = this.host.now();
    if (this.o.transferFailureRate > 0 && this.o.random() < this.o.transferFailureRate) {
      this.stats.transferFailures++;
      pd.prefill.engine.releaseHeld(pd.legId);
      this.fallBack(pd);
      return;
    }
    // vLLM pulls only the blocks the decode's prefix cache does not hold.
    const local = pd.decode.engine.cachedPrefixTokens(pd.request);
    const size = kvTransferSize(this.o.engine, pd.request.promptTokens.length - local);
    const ms = kvTransferMs(size, this.o.link);
    this.host.at(this.host.now() + ms, () => this.transferred(pd, size.bytes, ms));
  }

  /** The cached tokens to report for request `id`'s first token (the prefill's), if P/D. */
  reportedCached(id: string, decodeCached: number): number {
    const cached = this.cachedOf.get(id);
    this.cachedOf.delete(id);
    return cached ?? decodeCached;
  }

  /** `replica` just restarted with a fresh engine: settle the legs that touched the old one. */
  replicaDied(replica: Replica): void {
    for (const pd of [...this.legs.values()]) {
      if (pd.decode === replica && pd.decodeEpoch !== replica.epoch) this.decodeDied(pd);
      else if (pd.prefill === replica && pd.prefillEpoch !== replica.epoch && pd.phase === "prefill") {
        this.stats.prefillRetries++;
        this.end(pd);
        this.sendPrefill(pd.id, pd.request, pd.prefill, pd.decode);
      }
    }
  }

  private transferred(pd: PdRequest, bytes: number, ms: number): void {
    if (pd.phase !== "held") return;
    if (pd.prefill.epoch !== pd.prefillEpoch) {
      this.stats.staleTransfers++;
      this.fallBack(pd);
      return;
    }
    pd.prefill.engine.releaseHeld(pd.legId);
    pd.prefill.touched();
    this.stats.transfers++;
    this.stats.transferBytes += bytes;
    this.stats.transferMs.push(ms);
    this.end(pd);
    this.cachedOf.set(pd.id, pd.prefillCached);
    const remoteKvTokens = pd.request.promptTokens.length;
    this.host.startDecode(pd.id, pd.decode, { ...pd.request, remoteKvTokens });
  }

  /** The decode replica died before the decode leg began: the host retries or fails the request; the KV is let go. */
  private decodeDied(pd: PdRequest): void {
    this.stats.decodeLost++;
    this.host.fail(pd.id, "replica_died");
    if (pd.phase === "held" && pd.prefill.epoch === pd.prefillEpoch) {
      pd.phase = "stranded";
      this.host.at(Math.max(this.host.now(), pd.heldAtMs + this.o.abortTimeoutMs), () => this.expire(pd));
      return;
    }
    if (pd.phase === "prefill" && pd.prefill.epoch === pd.prefillEpoch) pd.prefill.engine.abort(pd.legId);
    this.end(pd);
  }

  private expire(pd: PdRequest): void {
    if (pd.prefill.epoch === pd.prefillEpoch && pd.prefill.engine.releaseHeld(pd.legId)) {
      this.stats.holdsExpired++;
      pd.prefill.touched();
    }
    this.end(pd);
  }

  /** The decode recomputes the prefill locally. */
  private fallBack(pd: PdRequest): void {
    this.stats.fallbacks++;
    this.end(pd);
    this.host.startDecode(pd.id, pd.decode, pd.request);
  }

  private end(pd: PdRequest): void {
    pd.phase = "done";
    this.legs.delete(pd.legId);
  }
}
