/**
 * Histograms over steps: bucket shapes for the "offset" view and percentile bands for the
 * "distribution" view, as TensorBoard draws them. Pure functions.
 */

export interface HistogramValue {
  min: number;
  max: number;
  num: number;
  sum: number;
  sum_squares: number;
  bucket_limit: number[];
  bucket: number[];
}

/** TensorBoard's distribution bands, in basis points: max, ±1.5σ, ±1σ, ±0.5σ, median, min. */
export const BASIS_POINTS = [0, 668, 1587, 3085, 5000, 6915, 8413, 9332, 10000];

/** Left and right edges of each bucket, the first bucket starting at the histogram's min. */
export function bucketEdges(h: HistogramValue): { left: number; right: number; count: number }[] {
  const out = [];
  let left = h.min;
  for (let i = 0; i < h.bucket.length; i++) {
    const right = Math.min(h.bucket_limit[i], h.max);
    if (h.bucket[i] > 0) {
      out.push({ left: Math.min(Math.max(left, h.min), right), right, count: h.bucket[i] });
    }
    left = h.bucket_limit[i];
  }
  return out;
}

/**
 * Values at the given basis points, as TensorBoard's distribution dashboard computes them
 * (`compress_histogram_proto`): the buckets' cumulative weight is scaled to 10000; a basis
 * point falls in the first bucket whose cumulative weight exceeds it and is interpolated
 * linearly between that bucket's left edge (the histogram's min for the first non-empty one)
 * and its right edge (clipped to the max). Points past the last bucket are the max.
 */
export function percentiles(h: HistogramValue, basisPoints: number[] = BASIS_POINTS): number[] {
  const total = h.bucket.reduce((s, c) => s + c, 0);
  if (!h.num || total <= 0) {
    return basisPoints.map(() => 0);
  }
  const top = basisPoints[basisPoints.length - 1];
  const weights: number[] = [];
  let acc = 0;
  for (const c of h.bucket) {
    acc += (c * top) / total;
    weights.push(acc);
  }
  return basisPoints.map(bp => {
    // the first bucket whose cumulative weight is above bp (searchsorted, side "right")
    let i = weights.findIndex(w => w > bp);
    while (i >= 0 && i < weights.length) {
      const cum = weights[i];
      const prev = i > 0 ? weights[i - 1] : 0;
      if (cum === prev) {
        i += 1;
        continue;
      }
      const lhs = i === 0 || prev === 0 ? h.min : Math.max(h.bucket_limit[i - 1], h.min);
      const rhs = Math.min(h.bucket_limit[i], h.max);
      return lhs + ((bp - prev) * (rhs - lhs)) / (cum - prev);
    }
    return h.max;
  });
}

/** Re-bin a histogram onto `bins` equal-width bins over [lo, hi] (for drawing). */
export function rebin(h: HistogramValue, lo: number, hi: number, bins: number): number[] {
  const out = new Array<number>(bins).fill(0);
  const width = (hi - lo) / bins || 1;
  for (const b of bucketEdges(h)) {
    const span = b.right - b.left;
    if (span <= 0) {
      const i = Math.min(bins - 1, Math.max(0, Math.floor((b.left - lo) / width)));
      out[i] += b.count;
      continue;
    }
    for (let i = 0; i < bins; i++) {
      const a = lo + i * width;
      const overlap = Math.min(a + width, b.right) - Math.max(a, b.left);
      if (overlap > 0) {
        out[i] += (b.count * overlap) / span;
      }
    }
  }
  return out;
}
