/**
 * Hot-path Prometheus instruments. prom-client validates, hashes and sorts a label object on
 * every observation (about a microsecond each, ~15 per proxied request); here a label set is
 * resolved once into a child handle, and observing is an array increment. The instruments register
 * into a prom-client `Registry` (they implement its metric interface), so `/metrics` output and
 * other registrants (flow control) are unchanged.
 */
import type { Registry } from "prom-client";

/** One exported sample, in the shape prom-client's registry serialises. */
interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

type Labels<L extends string> = Readonly<Record<L, string>>;

/** A metric family whose label sets become children on first use. */
abstract class Family<L extends string, C> {
  readonly aggregator = "sum";
  private readonly children = new Map<string, { labels: Labels<L>; child: C }>();

  constructor(
    readonly type: "counter" | "gauge" | "histogram",
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The handle for one label set (created at zero on first use; cache it on the hot path). */
  child(labels: Labels<L>): C {
    let key = "";
    for (const name of this.labelNames) key += `${labels[name]}\u0000`;
    let entry = this.children.get(key);
    if (!entry) {
      entry = { labels: { ...labels }, child: this.create() };
      this.children.set(key, entry);
    }
    return entry.child;
  }

  /** prom-client's registry calls this when rendering `/metrics`. */
  get(): { name: string; help: string; type: string; values: Sample[]; aggregator: string } {
    const values: Sample[] = [];
    for (const { labels, child } of this.children.values()) this.samples(labels, child, values);
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  protected abstract create(): C;
  protected abstract samples(labels: Labels<L>, child: C, out: Sample[]): void;
}

/** A counter or gauge series: a plain number. */
export class ValueChild {
  value = 0;

  /** Adds `n` (default 1; gauges may go down with `dec`). */
  inc(n = 1): void {
    this.value += n;
  }

  /** Subtracts `n` (default 1). */
  dec(n = 1): void {
    this.value -= n;
  }
}

/** Counter (`inc` only, by contract) or gauge family. */
export class LeanValue<L extends string> extends Family<L, ValueChild> {
  constructor(
    type: "counter" | "gauge",
    name: string,
    help: string,
    labelNames: readonly L[],
    registry: Registry,
  ) {
    super(type, name, help, labelNames, registry);
  }
  protected create(): ValueChild {
    return new ValueChild();
  }
  protected samples(labels: Labels<L>, child: ValueChild, out: Sample[]): void {
    out.push({ labels, value: child.value });
  }
}

/** One histogram series: per-bucket counts (not cumulative until export), sum and count. */
export class HistogramChild {
  private readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: Float64Array) {
    this.counts = new Float64Array(bounds.length);
  }

  /**
   * Records `value` as `weight` observations (default 1; a sampled source passes its sampling
   * interval). Values above the last bound land only in `+Inf`.
   */
  observe(value: number, weight = 1): void {
    this.sum += value * weight;
    this.count += weight;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.counts[i]! += weight;
        return;
      }
    }
  }

  /** Cumulative count of values ≤ bound `i`. */
  cumulative(out: Sample[], labels: Record<string, string>, name: string): void {
    let running = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      running += this.counts[i]!;
      out.push({ metricName: `${name}_bucket`, labels: { le: this.bounds[i]!, ...labels }, value: running });
    }
    out.push({ metricName: `${name}_bucket`, labels: { le: "+Inf", ...labels }, value: this.count });
  }
}

/** Histogram family with fixed bucket upper bounds (ascending, in the observed unit). */
export class LeanHistogram<L extends string> extends Family<L, HistogramChild> {
  private readonly bounds: Float64Array;

  constructor(
    name: string,
    help: string,
    buckets: readonly number[],
    labelNames: readonly L[],
    registry: Registry,
  ) {
    super("histogram", name, help, labelNames, registry);
    this.bounds = Float64Array.from(buckets);
    // An unlabelled histogram exports zeros before its first observation, as prom-client does.
    if (labelNames.length === 0) this.child({} as Labels<L>);
  }

  protected create(): HistogramChild {
    return new HistogramChild(this.bounds);
  }

  protected samples(labels: Labels<L>, child: HistogramChild, out: Sample[]): void {
    child.cumulative(out, labels, this.name);
    out.push({ metricName: `${this.name}_sum`, labels, value: child.sum });
    out.push({ metricName: `${this.name}_count`, labels, value: child.count });
  }
}
