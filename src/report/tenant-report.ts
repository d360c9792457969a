/**
 * Per-tenant outcome summary of a fleet run (flow-control experiments): TTFT of served requests,
 * rejections by reason and how long a rejected client waited for its answer, evictions, requests
 * left without an outcome, and Jain's index over the agent programs' service.
 */
import { percentileSorted } from "../measure/percentile.ts";
import type { RequestRecord } from "../measure/records.ts";

/** One tenant's numbers over the measurement window (times in ms). */
export interface TenantSummary {
  tenant: string;
  priority: number;
  arrivals: number;
  served: number;
  ttftP50: number;
  ttftP99: number;
  /** Outcome (other than served) → count. */
  dropped: Record<string, number>;
  /** How long rejected requests waited for their answer: p50 and max, ms (NaN if none). */
  rejectWaitP50: number;
  rejectWaitMax: number;
  /** Requests with no outcome, or still running when the run stopped (must be 0). */
  lost: number;
}

/** The whole run's table plus the fairness figure. */
export interface TenantReport {
  tenants: TenantSummary[];
  /** Service (input + 2 × output tokens of served requests) per fairness id of `fairnessTenant`. */
  service: Record<string, number>;
  /** Jain's index over `service` (1 = equal; 1/n = one flow got everything). NaN if no flows. */
  jain: number;
}

/** Summarises records with arrivals in [fromMs, toMs); `fairnessTenant` names whose flows to compare. */
export function tenantReport(
  records: readonly RequestRecord[],
  fromMs: number,
  toMs: number,
  fairnessTenant = "agents",
): TenantReport {
  const byTenant = new Map<string, RequestRecord[]>();
  const service: Record<string, number> = {};
  for (const r of records) {
    if (r.arrivalMs < fromMs || r.arrivalMs >= toMs) continue;
    let list = byTenant.get(r.tenant);
    if (!list) byTenant.set(r.tenant, (list = []));
    list.push(r);
    if (r.tenant !== fairnessTenant) continue;
    service[r.fairnessId] ??= 0;
    if (r.outcome === "served") service[r.fairnessId]! += r.inputTokens + 2 * r.outputTokens;
  }
  const tenants = [...byTenant.entries()]
    .map(([tenant, list]) => summarizeTenant(tenant, list))
    .sort((a, b) => b.priority - a.priority);
  return { tenants, service, jain: jainIndex(Object.values(service)) };
}

function summarizeTenant(tenant: string, list: RequestRecord[]): TenantSummary {
  const ttft: number[] = [];
  const rejectWait: number[] = [];
  const dropped: Record<string, number> = {};
  let served = 0;
  let lost = 0;
  for (const r of list) {
    if (r.outcome === "served") {
      served++;
      ttft.push(r.firstTokenMs - r.arrivalMs);
    } else if (r.outcome === undefined || r.outcome === "unfinished") {
      lost++;
    } else {
      dropped[r.outcome] = (dropped[r.outcome] ?? 0) + 1;
      if (r.outcome.startsWith("rejected-")) rejectWait.push(r.endMs - r.arrivalMs);
    }
  }
  ttft.sort((a, b) => a - b);
  rejectWait.sort((a, b) => a - b);
  return {
    tenant,
    priority: list[0]!.priority,
    arrivals: list.length,
    served,
    ttftP50: percentileSorted(ttft, 50),
    ttftP99: percentileSorted(ttft, 99),
    dropped,
    rejectWaitP50: percentileSorted(rejectWait, 50),
    rejectWaitMax: rejectWait.at(-1) ?? Number.NaN,
    lost,
  };
}

/**
 * Where a tenant's slow requests (served, TTFT above its `q` quantile) spent their time, in ms
 * means: flow-control queue, engine waiting queue (dispatch → first scheduled step), and the steps
 * from then to the first token (with chunking off, one step). `byReplicaTenant` counts them by the
 * tenant that sent the most requests to their replica in the window: a latency tenant whose slow
 * requests sit on another tenant's replicas is suffering placement, not admission.
 */
export interface TailBreakdown {
  tenant: string;
  /** The TTFT quantile the slow requests exceed, ms. */
  thresholdMs: number;
  count: number;
  ttftMs: number;
  queuedMs: number;
  engineWaitMs: number;
  firstStepsMs: number;
  inputTokens: number;
  cachedTokens: number;
  byReplicaTenant: Record<string, number>;
}

/** {@link TailBreakdown} of `tenant` over arrivals in [fromMs, toMs); undefined if it served none. */
export function tailBreakdown(
  records: readonly RequestRecord[],
  fromMs: number,
  toMs: number,
  tenant: string,
  q = 0.95,
): TailBreakdown | undefined {
  const window = records.filter((r) => r.arrivalMs >= fromMs && r.arrivalMs < toMs);
  const served = window.filter((r) => r.tenant === tenant && r.outcome === "served");
  if (served.length === 0) return undefined;
  const ttft = (r: RequestRecord) => r.firstTokenMs - r.arrivalMs;
  const thresholdMs = percentileSorted(
    served.map(ttft).sort((a, b) => a - b),
    q * 100,
  );
  const slow = served.filter((r) => ttft(r) > thresholdMs);
  const mainTenant = replicaMainTenants(window);
  const byReplicaTenant: Record<string, number> = {};
  for (const r of slow) {
    const main = mainTenant.get(r.endpoint) ?? "none";
    byReplicaTenant[main] = (byReplicaTenant[main] ?? 0) + 1;
  }
  const mean = (f: (r: RequestRecord) => number) => slow.reduce((sum, r) => sum + f(r), 0) / slow.length;
  return {
    tenant,
    thresholdMs,
    count: slow.length,
    ttftMs: mean(ttft),
    queuedMs: mean((r) => r.queuedMs),
    engineWaitMs: mean((r) => r.startMs - r.arrivalMs - r.queuedMs),
    firstStepsMs: mean((r) => r.firstTokenMs - r.startMs),
    inputTokens: mean((r) => r.inputTokens),
    cachedTokens: mean((r) => r.cachedTokens),
    byReplicaTenant,
  };
}

/** Endpoint index → the tenant that sent it the most requests among `records`. */
function replicaMainTenants(records: readonly RequestRecord[]): Map<number, string> {
  const counts = new Map<number, Map<string, number>>();
  for (const r of records) {
    if (r.endpoint < 0) continue;
    let perTenant = counts.get(r.endpoint);
    if (!perTenant) counts.set(r.endpoint, (perTenant = new Map()));
    perTenant.set(r.tenant, (perTenant.get(r.tenant) ?? 0) + 1);
  }
  const main = new Map<number, string>();
  for (const [endpoint, perTenant] of counts) {
    main.set(endpoint, [...perTenant].reduce((best, e) => (e[1] > best[1] ? e : best))[0]);
  }
  return main;
}

/** Jain's fairness index (Σx)² / (n·Σx²); 1 when all equal, NaN for no values, 1 when all zero. */
export function jainIndex(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  let squares = 0;
  for (const v of values) {
    sum += v;
    squares += v * v;
  }
  return squares === 0 ? 1 : (sum * sum) / (values.length * squares);
}

/** Header of {@link formatTenantReport}'s rows (the flow-experiments table layout). */
export const TENANT_TABLE_HEADER = `${"config".padEnd(19)} load tenant  prio  arriv served ttft50  ttft99  rejwait50/max lost dropped`;

/**
 * One row per tenant (label = config name, load as given) plus the agents' Jain line, in the
 * flow-experiments layout: times in ms below 10 s, else seconds; `-` for none.
 */
export function formatTenantReport(report: TenantReport, label: string, load: string): string[] {
  const rows = report.tenants.map((t) => {
    const dropped = Object.entries(t.dropped)
      .map(([reason, n]) => `${reason.replace("rejected-", "")}:${n}`)
      .join(" ");
    return [
      label.padEnd(19),
      load.padStart(4),
      t.tenant.padEnd(7),
      String(t.priority).padStart(4),
      String(t.arrivals).padStart(6),
      String(t.served).padStart(6),
      formatMs(t.ttftP50).padStart(7),
      formatMs(t.ttftP99).padStart(7),
      `${formatMs(t.rejectWaitP50)}/${formatMs(t.rejectWaitMax)}`.padStart(12),
      String(t.lost).padStart(4),
      dropped || "-",
    ].join(" ");
  });
  const service = Object.entries(report.service)
    .map(([id, s]) => `${id}=${(s / 1e6).toFixed(2)}M`)
    .join(" ");
  const jain = Number.isNaN(report.jain) ? "-" : report.jain.toFixed(3);
  return [...rows, `  agents Jain ${jain} (${service})`];
}

function formatMs(ms: number): string {
  if (Number.isNaN(ms)) return "-";
  return ms < 10_000 ? `${Math.round(ms)}` : `${(ms / 1000).toFixed(1)}s`;
}
