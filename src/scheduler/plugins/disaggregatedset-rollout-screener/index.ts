/**
 * `disaggregatedset-rollout-screener` (llm-d, alpha): during a rolling upgrade of a
 * DisaggregatedSet, the prefill and the decode of one request come from the same revision.
 *
 * A Screener: before any profile runs it picks one revision for the request and screens out the
 * in-scope endpoints of every other revision, so the prefill and decode profiles both choose from
 * that revision. In scope: endpoints carrying the DisaggregatedSet revision label
 * (`disaggregatedset.x-k8s.io/revision`) that match `scope.labelSelector`; others pass untouched.
 *
 * Revision gating `max-role`: a revision is eligible when it has at least one ready endpoint in
 * every role of `requireRoles.values` (prefill and decode by default); it is chosen with a
 * probability proportional to the ready endpoints of its largest required role, so traffic
 * follows the rollout's progress. The candidates the scheduler is given are the ready endpoints.
 * No eligible revision → nothing is screened (fail open) and no revision is stamped.
 *
 * `headerSelectors` narrow in-scope endpoints first by a request header matched against a label
 * (e.g. `x-disagg-slice` against `disaggregatedset.x-k8s.io/slice`): `strict` keeps only matches,
 * `prefer` keeps matches when there are any. At PreRequest the chosen revision is sent upstream
 * and to the client as `x-disagg-revision`.
 */
import { z } from "zod";
import {
  DECODE_ROLES,
  type Endpoint,
  ENCODE_ROLES,
  PREFILL_ROLES,
  ROLE_LABEL,
} from "../../../endpoints/endpoint.ts";
import { RESPONSE_HEADERS_STATE_KEY, UPSTREAM_HEADERS_STATE_KEY } from "../../framework/data-keys.ts";
import type { PreRequest, SchedulingContext, Screener } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import { labelMatcher, labelSelectorSchema } from "../shared/label-selector.ts";
import { setStateHeader } from "../shared/state-headers.ts";

/** Pod label naming the DisaggregatedSet revision (kubernetes-sigs/lws DisaggregatedSet). */
export const REVISION_LABEL = "disaggregatedset.x-k8s.io/revision";
/** Pod label naming the DisaggregatedSet role (`spec.roles[].name`). */
export const DS_ROLE_LABEL = "disaggregatedset.x-k8s.io/role";
/** Header carrying the chosen revision, upstream and to the client (llm-d). */
export const REVISION_HEADER = "x-disagg-revision";

const headerSelector = z.strictObject({
  name: z.string().min(1),
  headerName: z.string().min(1),
  labelKey: z.string().min(1),
  mode: z.enum(["strict", "prefer"]).default("strict"),
});

const parameters = z
  .strictObject({
    scope: z.strictObject({ labelSelector: labelSelectorSchema.prefault({}) }).prefault({}),
    headerSelectors: z.array(headerSelector).default([]),
    revisionGating: z
      .strictObject({
        mode: z.enum(["max-role"]).default("max-role"),
        requireRoles: z
          .strictObject({ values: z.array(z.string().min(1)).min(1).default(["prefill", "decode"]) })
          .prefault({}),
      })
      .prefault({}),
  })
  .prefault({});

/** Validated parameters of `disaggregatedset-rollout-screener`. */
export type RolloutScreenerParams = z.output<typeof parameters>;
type HeaderSelector = z.output<typeof headerSelector>;

/**
 * The roles an endpoint serves: its DisaggregatedSet role when labelled, else what its
 * `llm-d.ai/role` lets the role filters pick it for (`both` serves prefill and decode).
 */
export function rolesOf(endpoint: Endpoint): string[] {
  const labels = endpoint.metadata.labels;
  const dsRole = labels[DS_ROLE_LABEL];
  if (dsRole !== undefined) return [dsRole];
  const role = labels[ROLE_LABEL];
  if (role === undefined) return [];
  const served: [string, readonly string[]][] = [
    ["prefill", PREFILL_ROLES],
    ["decode", DECODE_ROLES],
    ["encode", ENCODE_ROLES],
  ];
  return served.filter(([, roles]) => roles.includes(role)).map(([name]) => name);
}

/** Eligible revisions with their `max-role` weight, in first-seen order. */
export function revisionWeights(
  endpoints: readonly Endpoint[],
  requiredRoles: readonly string[],
): Map<string, number> {
  const counts = new Map<string, Map<string, number>>();
  for (const endpoint of endpoints) {
    const revision = endpoint.metadata.labels[REVISION_LABEL]!;
    let perRole = counts.get(revision);
    if (!perRole) counts.set(revision, (perRole = new Map()));
    for (const role of rolesOf(endpoint)) perRole.set(role, (perRole.get(role) ?? 0) + 1);
  }
  const weights = new Map<string, number>();
  for (const [revision, perRole] of counts) {
    const ready = requiredRoles.map((role) => perRole.get(role) ?? 0);
    if (ready.every((n) => n > 0)) weights.set(revision, Math.max(...ready));
  }
  return weights;
}

function weightedChoice(weights: ReadonlyMap<string, number>, random: () => number): string | undefined {
  let total = 0;
  for (const w of weights.values()) total += w;
  let target = random() * total;
  let last: string | undefined;
  for (const [revision, w] of weights) {
    last = revision;
    target -= w;
    if (target < 0) return revision;
  }
  return last;
}

/** The screener; `random` draws the revision (seeded in tests and the fleet simulator). */
export class RolloutScreener implements Screener, PreRequest {
  readonly type = "disaggregatedset-rollout-screener";
  private readonly inScope: (endpoint: Endpoint) => boolean;
  /** `ctx.state` key of the revision chosen for the request. */
  private readonly revisionKey: string;

  constructor(
    readonly name: string,
    private readonly params: RolloutScreenerParams,
    private readonly random: () => number,
  ) {
    const matches = labelMatcher(params.scope.labelSelector);
    this.inScope = (e) => e.metadata.labels[REVISION_LABEL] !== undefined && matches(e.metadata.labels);
    this.revisionKey = `${name}/revision`;
  }

  screen(ctx: SchedulingContext, endpoints: readonly Endpoint[]): readonly Endpoint[] {
    const scoped = this.params.headerSelectors.reduce<readonly Endpoint[]>(
      (kept, selector) => this.selectByHeader(ctx, selector, kept),
      endpoints.filter(this.inScope),
    );
    const weights = revisionWeights(scoped, this.params.revisionGating.requireRoles.values);
    const revision = weightedChoice(weights, this.random);
    if (revision === undefined) return endpoints;
    ctx.state.set(this.revisionKey, revision);
    const kept = new Set(scoped.filter((e) => e.metadata.labels[REVISION_LABEL] === revision));
    return endpoints.filter((e) => !this.inScope(e) || kept.has(e));
  }

  private selectByHeader(
    ctx: SchedulingContext,
    selector: HeaderSelector,
    endpoints: readonly Endpoint[],
  ): readonly Endpoint[] {
    const wanted = ctx.request.headers[selector.headerName.toLowerCase()];
    if (wanted === undefined) return endpoints;
    const matching = endpoints.filter((e) => e.metadata.labels[selector.labelKey] === wanted);
    return matching.length > 0 || selector.mode === "strict" ? matching : endpoints;
  }

  preRequest(ctx: SchedulingContext): void {
    const revision = ctx.state.get(this.revisionKey) as string | undefined;
    if (revision === undefined) return;
    setStateHeader(ctx, UPSTREAM_HEADERS_STATE_KEY, REVISION_HEADER, revision);
    setStateHeader(ctx, RESPONSE_HEADERS_STATE_KEY, REVISION_HEADER, revision);
  }
}

/** Registry entry for `disaggregatedset-rollout-screener`. */
export const definition: PluginDefinition<RolloutScreenerParams> = {
  type: "disaggregatedset-rollout-screener",
  stability: "alpha",
  description:
    "DisaggregatedSet rollouts: one revision per request (weighted by its largest role's ready pods) for prefill and decode; sets x-disagg-revision",
  parameters,
  create: (params, env) => new RolloutScreener(env.name, params, env.random ?? Math.random),
};
