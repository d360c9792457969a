/** Score normalisations shared by scorers. Outputs are in [0,1] and aligned with the input. */

/**
 * Min-max normalisation where lower is better: `(max − v)/(max − min)`; all equal → 1.0 for all
 * (llm-d's queue-scorer and running-requests-size-scorer).
 */
export function minMaxLowerIsBetter(values: ArrayLike<number>): Float64Array {
  const n = values.length;
  const out = new Float64Array(n);
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const range = max - min;
  for (let i = 0; i < n; i++) out[i] = range > 0 ? (max - values[i]!) / range : 1;
  return out;
}
