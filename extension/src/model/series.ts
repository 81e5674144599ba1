/**
 * Scalar series for the charts: merging incremental server replies, x axes, smoothing,
 * downsampling for display and CSV export. Pure functions, no DOM.
 *
 * Order matters: smoothing runs on the full-resolution series, then the smoothed line is
 * downsampled to the chart's pixel width (keeping each bucket's extremes), so the picture
 * does not depend on the zoom level.
 */

/** One server reply of GET nbflow/api/scalars. */
export interface ScalarsReply {
  run: string;
  tag: string;
  offset: number;
  next_offset: number;
  total: number;
  downsampled: boolean;
  steps: number[];
  wall_times: number[];
  values: (number | null)[];
}

export interface ScalarSeries {
  run: string;
  tag: string;
  steps: number[];
  wallTimes: number[];
  values: (number | null)[];
  /** Offset to ask the server from next time. */
  nextOffset: number;
}

export function emptySeries(run: string, tag: string): ScalarSeries {
  return { run, tag, steps: [], wallTimes: [], values: [], nextOffset: 0 };
}

/** Append a reply to a series; a reply for an offset the series is not at is ignored. */
export function appendReply(series: ScalarSeries, reply: ScalarsReply): ScalarSeries {
  if (reply.offset === 0 && series.nextOffset !== 0) {
    series = emptySeries(series.run, series.tag);
  }
  if (reply.offset !== series.nextOffset) {
    return series;
  }
  return {
    ...series,
    steps: series.steps.concat(reply.steps),
    wallTimes: series.wallTimes.concat(reply.wall_times),
    values: series.values.concat(reply.values),
    nextOffset: reply.next_offset
  };
}

export type XAxis = 'step' | 'relative' | 'wall';

/** x coordinates for an axis: steps, seconds since the run's first point, or wall seconds. */
export function xValues(series: ScalarSeries, axis: XAxis): number[] {
  if (axis === 'step') {
    return series.steps.slice();
  }
  if (axis === 'relative') {
    const t0 = series.wallTimes.length ? series.wallTimes[0] : 0;
    return series.wallTimes.map(t => t - t0);
  }
  return series.wallTimes.slice();
}

/**
 * TensorBoard's smoothing: an exponential moving average, debiased so the first points are
 * not pulled towards zero. `weight` in [0, 1): 0 leaves the series as it is. Gaps (null,
 * a NaN on the server) stay gaps and do not reset the average.
 */
export function smooth(values: (number | null)[], weight: number): (number | null)[] {
  if (weight <= 0) {
    return values.slice();
  }
  const w = Math.min(weight, 0.999);
  let last = 0;
  let n = 0;
  return values.map(v => {
    if (v === null || !Number.isFinite(v)) {
      return null;
    }
    last = last * w + (1 - w) * v;
    n += 1;
    return last / (1 - Math.pow(w, n));
  });
}

/**
 * Indices of at most ~`maxPoints` points keeping, per bucket of x range, the first, minimum,
 * maximum and last point (M4), so spikes survive. Points are assumed in x order.
 */
export function downsampleMinMax(xs: number[], ys: (number | null)[], maxPoints: number): number[] {
  const n = xs.length;
  if (maxPoints <= 0 || n <= maxPoints) {
    return xs.map((_, i) => i);
  }
  const buckets = Math.max(1, Math.floor(maxPoints / 4));
  const x0 = xs[0];
  const span = xs[n - 1] - x0 || 1;
  const keep: number[] = [];
  let start = 0;
  for (let b = 0; b < buckets && start < n; b++) {
    const limit = b === buckets - 1 ? Infinity : x0 + (span * (b + 1)) / buckets;
    let end = start;
    while (end < n && xs[end] < limit) {
      end++;
    }
    if (end === start) {
      continue;
    }
    let lo = -1;
    let hi = -1;
    for (let i = start; i < end; i++) {
      const y = ys[i];
      if (y === null) {
        continue;
      }
      if (lo < 0 || y < (ys[lo] as number)) {
        lo = i;
      }
      if (hi < 0 || y > (ys[hi] as number)) {
        hi = i;
      }
    }
    keep.push(start, end - 1);
    if (lo >= 0) {
      keep.push(lo, hi);
    }
    start = end;
  }
  return [...new Set(keep)].sort((a, b) => a - b);
}

export interface Extent {
  min: number;
  max: number;
}

/** Range of the finite (and, for a log axis, positive) numbers; null when there are none. */
export function extent(values: Iterable<number | null>, positiveOnly = false): Extent | null {
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v === null || !Number.isFinite(v) || (positiveOnly && v <= 0)) {
      continue;
    }
    min = Math.min(min, v);
    max = Math.max(max, v);
  }
  return min === Infinity ? null : { min, max };
}

/** "Nice" tick values covering an extent, about `count` of them. */
export function ticks(e: Extent, count = 5): number[] {
  const span = e.max - e.min;
  if (!(span > 0)) {
    return [e.min];
  }
  const raw = span / count;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map(m => m * mag).find(s => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let t = Math.ceil(e.min / step) * step; t <= e.max + step * 1e-9; t += step) {
    out.push(Number(t.toPrecision(12)));
  }
  return out;
}

/** CSV of several series: one row per point, as TensorBoard's download gives. */
export function toCsv(series: ScalarSeries[]): string {
  const rows = ['run,tag,step,wall_time,value'];
  const quote = (s: string): string => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  for (const s of series) {
    for (let i = 0; i < s.steps.length; i++) {
      const v = s.values[i];
      rows.push([quote(s.run), quote(s.tag), s.steps[i], s.wallTimes[i], v === null ? 'nan' : v].join(','));
    }
  }
  return rows.join('\n') + '\n';
}

/** Tags matching a filter: a regular expression, or a plain substring when it is not one. */
/**
 * The name a run goes by in legends: its folder, relative to the log directory; the log
 * directory itself (run ".") is named after the directory's last component.
 */
export function runLabel(run: string, logdir = ''): string {
  if (run !== '.' && run !== '') {
    return run;
  }
  const parts = logdir.split(/[\\/]+/).filter(p => p && p !== '.');
  return parts.length ? parts[parts.length - 1] : 'run';
}

export function filterTags(tags: string[], filter: string): string[] {
  if (!filter.trim()) {
    return tags;
  }
  let re: RegExp;
  try {
    re = new RegExp(filter, 'i');
  } catch {
    const f = filter.toLowerCase();
    return tags.filter(t => t.toLowerCase().includes(f));
  }
  return tags.filter(t => re.test(t));
}

/**
 * A path for the server (relative to the board root) from what the user or the kernel gave:
 * absolute paths inside the root become relative; others are returned as null.
 */
export function relativeLogdir(logdir: string, root: string): string | null {
  const clean = (p: string): string => p.replace(/\\/g, '/').replace(/\/+$/, '');
  const d = clean(logdir.trim());
  if (!d.startsWith('/') && !/^[A-Za-z]:\//.test(d)) {
    return d === '' ? '.' : d.replace(/^\.\//, '');
  }
  const r = clean(root);
  if (!r) {
    return null;
  }
  if (d === r) {
    return '.';
  }
  return d.startsWith(r + '/') ? d.slice(r.length + 1) : null;
}
