/**
 * Interpolation over measured points, as the profile README prescribes: log-log between points (and
 * below the first, continuing the first segment's power law), linear in x past the last point.
 * Allocation-free after construction.
 */

/**
 * y at x over points sorted by x (all x and y > 0, at least one point). x ≤ 0 gives 0: no work, no time.
 */
export function interpolate(xs: ArrayLike<number>, ys: ArrayLike<number>, x: number): number {
  if (x <= 0) return 0;
  const n = xs.length;
  if (n === 1) return ys[0]! * (x / xs[0]!);
  const last = n - 1;
  if (x >= xs[last]!) {
    const slope = (ys[last]! - ys[last - 1]!) / (xs[last]! - xs[last - 1]!);
    return ys[last]! + Math.max(0, slope) * (x - xs[last]!);
  }
  let i = 1;
  while (i < last && xs[i]! < x) i++;
  const x0 = xs[i - 1]!;
  const y0 = ys[i - 1]!;
  const exponent = Math.log(ys[i]! / y0) / Math.log(xs[i]! / x0);
  return y0 * Math.exp(exponent * Math.log(x / x0));
}

/** A 1-D measured curve. */
export class Curve {
  readonly xs: Float64Array;
  readonly ys: Float64Array;

  /** Points in any order; duplicate x keeps the last. */
  constructor(points: Iterable<readonly [number, number]>) {
    const sorted = [...new Map(points)].sort((a, b) => a[0] - b[0]);
    if (sorted.length === 0) throw new Error("a curve needs at least one point");
    this.xs = Float64Array.from(sorted, (p) => p[0]);
    this.ys = Float64Array.from(sorted, (p) => p[1]);
  }

  /** Interpolated y at x (0 at x ≤ 0). */
  at(x: number): number {
    return interpolate(this.xs, this.ys, x);
  }
}

/**
 * A 2-D measured surface: one {@link Curve} over the inner variable per measured outer value; the outer
 * variable is interpolated the same way across the rows' values. Rows may have different inner points.
 */
export class Surface {
  private readonly outer: Float64Array;
  private readonly rows: Curve[];
  private readonly scratch: Float64Array;

  /** `points` are [outer, inner, y]. */
  constructor(points: Iterable<readonly [number, number, number]>) {
    const byOuter = new Map<number, [number, number][]>();
    for (const [o, i, y] of points) {
      const row = byOuter.get(o) ?? [];
      row.push([i, y]);
      byOuter.set(o, row);
    }
    const keys = [...byOuter.keys()].sort((a, b) => a - b);
    this.outer = Float64Array.from(keys);
    this.rows = keys.map((k) => new Curve(byOuter.get(k)!));
    this.scratch = new Float64Array(keys.length);
  }

  /** Interpolated value at (outer, inner); 0 when either is ≤ 0. */
  at(outer: number, inner: number): number {
    if (outer <= 0 || inner <= 0) return 0;
    const rows = this.rows;
    for (let r = 0; r < rows.length; r++) this.scratch[r] = rows[r]!.at(inner);
    return interpolate(this.outer, this.scratch, outer);
  }
}
