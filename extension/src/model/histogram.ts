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

/** Values at the given basis points, interpolating linearly inside a bucket. */
export function percentiles(h: HistogramValue, basisPoints: number[] = BASIS_POINTS): number[] {
  const buckets = bucketEdges(h);
  const total = buckets.reduce((s, b) => s + b.count, 0);
  if (total === 0) {
    return basisPoints.map(() => 0);
  }
  return basisPoints.map(bp => {
    const target = (bp / 10000) * total;
    let seen = 0;
    for (const b of buckets) {
      if (seen + b.count >= target) {
        const f = b.count ? (target - seen) / b.count : 0;
        return b.left + f * (b.right - b.left);
      }
      seen += b.count;
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
