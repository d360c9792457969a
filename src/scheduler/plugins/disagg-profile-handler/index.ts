/**
 * `disagg-profile-handler` (llm-d, beta): runs up to three scheduling profiles per request —
 * decode always, encode and prefill when their decider (a plugin named in `deciders`) approves —
 * and makes decode the primary result, the endpoint the request is sent to. At PreRequest it tells
 * the decode side where the other stages run: `x-prefiller-host-port` (the prefill pick) and
 * `x-encoder-hosts-ports` (the encode picks, comma-separated), only for stages that picked.
 *
 * Orders (llm-d's `stageOrder`):
 * - `decode-first` (default): decode → encode → prefill; deciders see the decode pick (the prefix
 *   decider reads its cache match), and the decode pick is published as `peer-endpoint` before
 *   prefill runs so topology plugins can place prefill near it;
 * - `prefill-first`: prefill (whenever the profile exists) → encode → decode, with the prefill pick
 *   as decode's `peer-endpoint`. A prefill decider is a config error here, as in llm-d, since it
 *   would have no decode endpoint to judge.
 * A stage whose profile is not configured is skipped. A prefill stage that ran and found no
 * endpoint fails the request (llm-d: completing decode-only would silently move prefill work onto
 * the decode pod); an encode stage that found none is dropped.
 */
import { z } from "zod";
import { ENCODERS_HEADER, PREFILLER_HEADER } from "../../../disagg/headers.ts";
import { LlmdError } from "../../../api/errors.ts";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import {
  DISAGG_DECISION_STATE_KEY,
  type DisaggDecision,
  PEER_ENDPOINT_ATTRIBUTE,
  UPSTREAM_HEADERS_STATE_KEY,
} from "../../framework/data-keys.ts";
import type {
  PreRequest,
  ProfileHandler,
  ProfileRunResult,
  SchedulerProfile,
  SchedulingContext,
  SchedulingResult,
} from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import { type Decider, resolveDecider } from "../shared/decider.ts";
import { hostPort } from "../shared/host-port.ts";
import { setStateHeader } from "../shared/state-headers.ts";

export { ENCODERS_HEADER, PREFILLER_HEADER };

const profileName = (fallback: string) => z.string().min(1).default(fallback);

const parameters = z
  .strictObject({
    stageOrder: z.enum(["decode-first", "prefill-first"]).default("decode-first"),
    profiles: z
      .strictObject({
        decode: profileName("decode"),
        prefill: profileName("prefill"),
        encode: profileName("encode"),
      })
      .prefault({}),
    deciders: z
      .strictObject({ prefill: z.string().min(1).optional(), encode: z.string().min(1).optional() })
      .prefault({}),
  })
  .prefault({})
  .superRefine((p, ctx) => {
    if (p.stageOrder === "prefill-first" && p.deciders.prefill !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["deciders", "prefill"],
        message: "a prefill decider is not supported with stageOrder prefill-first",
      });
  });

/** Validated parameters of `disagg-profile-handler`. */
export type DisaggParams = z.output<typeof parameters>;

type Results = ReadonlyMap<string, ProfileRunResult | null>;
type Profiles = ReadonlyMap<string, SchedulerProfile>;

const firstTarget = (run: ProfileRunResult | null | undefined): Endpoint | undefined =>
  run?.targetEndpoints[0];

/** The handler; the deciders are resolved once at creation. */
export class DisaggProfileHandler implements ProfileHandler, PreRequest {
  readonly type = "disagg-profile-handler";
  /** `ctx.state` key of the stages whose decider declined for this request. */
  private readonly declinedKey: string;

  constructor(
    readonly name: string,
    readonly params: DisaggParams,
    private readonly prefillDecider: Decider | undefined,
    private readonly encodeDecider: Decider | undefined,
  ) {
    this.declinedKey = `${name}/declined`;
  }

  pickProfiles(ctx: SchedulingContext, profiles: Profiles, results: Results): SchedulerProfile[] {
    const next =
      this.params.stageOrder === "prefill-first"
        ? this.nextPrefillFirst(ctx, profiles, results)
        : this.nextDecodeFirst(ctx, profiles, results);
    return next ? [next] : [];
  }

  private nextDecodeFirst(ctx: SchedulingContext, profiles: Profiles, results: Results) {
    const { decode, prefill, encode } = this.params.profiles;
    if (!results.has(decode)) return profiles.get(decode);
    const decodePick = firstTarget(results.get(decode));
    if (!decodePick) return undefined;
    if (this.approves(ctx, profiles, results, encode, this.encodeDecider, decodePick))
      return profiles.get(encode);
    if (this.approves(ctx, profiles, results, prefill, this.prefillDecider, decodePick)) {
      ctx.request.attributes.set(PEER_ENDPOINT_ATTRIBUTE, decodePick);
      return profiles.get(prefill);
    }
    return undefined;
  }

  private nextPrefillFirst(ctx: SchedulingContext, profiles: Profiles, results: Results) {
    const { decode, prefill, encode } = this.params.profiles;
    if (results.has(decode)) return undefined;
    if (profiles.has(prefill) && !results.has(prefill)) return profiles.get(prefill);
    if (this.approves(ctx, profiles, results, encode, this.encodeDecider, undefined))
      return profiles.get(encode);
    const prefillPick = firstTarget(results.get(prefill));
    if (prefillPick && profiles.has(decode)) ctx.request.attributes.set(PEER_ENDPOINT_ATTRIBUTE, prefillPick);
    return profiles.get(decode);
  }

  /** Whether optional stage `stage` should run now; a refusal is remembered for the request. */
  private approves(
    ctx: SchedulingContext,
    profiles: Profiles,
    results: Results,
    stage: string,
    decider: Decider | undefined,
    decodePick: Endpoint | undefined,
  ): boolean {
    if (!profiles.has(stage) || results.has(stage)) return false;
    let declined = ctx.state.get(this.declinedKey) as Set<string> | undefined;
    if (declined?.has(stage)) return false;
    if (decider?.disaggregate(ctx, decodePick)) return true;
    if (!declined) ctx.state.set(this.declinedKey, (declined = new Set()));
    declined.add(stage);
    return false;
  }

  processResults(_ctx: SchedulingContext, results: Results): SchedulingResult | LlmdError {
    const { decode, prefill } = this.params.profiles;
    if (!firstTarget(results.get(decode)))
      return new LlmdError("no_endpoint_picked", `profile "${decode}" found no decode endpoint`);
    if (results.has(prefill) && !firstTarget(results.get(prefill)))
      return new LlmdError("no_endpoint_picked", `profile "${prefill}" was required but found no endpoint`);
    return { primaryProfileName: decode, profileResults: new Map(results) };
  }

  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    const { prefill, encode } = this.params.profiles;
    const prefillPick = firstTarget(result.profileResults.get(prefill));
    if (prefillPick) setStateHeader(ctx, UPSTREAM_HEADERS_STATE_KEY, PREFILLER_HEADER, hostPort(prefillPick));
    const encoders = result.profileResults.get(encode)?.targetEndpoints ?? [];
    if (encoders.length > 0)
      setStateHeader(ctx, UPSTREAM_HEADERS_STATE_KEY, ENCODERS_HEADER, encoders.map(hostPort).join(","));
    ctx.state.set(DISAGG_DECISION_STATE_KEY, decisionOf(prefillPick !== undefined, encoders.length > 0));
  }
}

function decisionOf(prefill: boolean, encode: boolean): DisaggDecision {
  if (encode) return prefill ? "encode-prefill-decode" : "encode-decode";
  return prefill ? "prefill-decode" : "decode-only";
}

/** Registry entry for `disagg-profile-handler`. */
export const definition: PluginDefinition<DisaggParams> = {
  type: "disagg-profile-handler",
  stability: "beta",
  description:
    "P/D and E/P/D: decode always, encode/prefill when their decider approves; decode is primary; sets x-prefiller-host-port",
  parameters,
  create: (params, env) =>
    new DisaggProfileHandler(
      env.name,
      params,
      resolveDecider(env, "deciders.prefill", params.deciders.prefill),
      resolveDecider(env, "deciders.encode", params.deciders.encode),
    ),
};
