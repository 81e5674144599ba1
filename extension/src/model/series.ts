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
 * not pulled towards zero. `weight` in [0, 1): 0 leaves the series as it is.
 *
 *     last_n = w * last_{n-1} + (1 - w) * v_n,   last_0 = 0,   smoothed_n = last_n / (1 - w^n)
 *
 * where n counts the finite points so far. Gaps (null, a NaN on the server) stay gaps and do not
 * advance n; a constant series is left as it is (no rounding noise), as TensorBoard does.
 */
export function smooth(values: (number | null)[], weight: number): (number | null)[] {
  if (weight <= 0) {
    return values.slice();
  }
  const w = Math.min(weight, 0.999);
  const first = values[0];
  if (values.every(v => v === first)) {
    return values.slice();
  }
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

/**
 * The y range of a chart as TensorBoard 2.21's scalar cards compute it. `values` are the drawn
 * lines' points (the smoothed ones when smoothing is on: the raw lines are faint context and do
 * not stretch the axis). With `ignoreOutliers` ("Ignore outliers in chart scaling", on by
 * default) the range runs from the 5th to the 95th percentile of the sorted values
 * (`sorted[ceil(0.05 (n-1))]` to `sorted[floor(0.95 (n-1))]`, for more than two values); then
 * 5% of the span is added on each side and the ends are rounded out to tick values. A flat
 * series at y gets [0, 2y] (or [2y, 0], or [-1, 1] at 0). A log axis keeps positive values and
 * spans [min / 2, max * 2]. Null when there is nothing to draw.
 */
export function yDomain(
  values: Iterable<number | null>,
  options: { ignoreOutliers?: boolean; log?: boolean } = {}
): Extent | null {
  const sorted: number[] = [];
  for (const v of values) {
    if (v !== null && Number.isFinite(v) && (!options.log || v > 0)) {
      sorted.push(v);
    }
  }
  if (!sorted.length) {
    return null;
  }
  sorted.sort((a, b) => a - b);
  let lo = sorted[0];
  let hi = sorted[sorted.length - 1];
  if (options.ignoreOutliers && sorted.length > 2) {
    lo = sorted[Math.ceil(0.05 * (sorted.length - 1))];
    hi = sorted[Math.floor(0.95 * (sorted.length - 1))];
  }
  if (options.log) {
    return { min: lo * 0.5, max: hi * 2 };
  }
  if (lo === hi) {
    return lo === 0 ? { min: -1, max: 1 } : lo < 0 ? { min: 2 * lo, max: 0 } : { min: 0, max: 2 * lo };
  }
  const pad = (hi - lo + Number.EPSILON) * 0.05;
  return niceExtent({ min: lo - pad, max: hi + pad });
}

/**
 * An extent widened to round numbers, as d3's `scale.nice()`: the tick step for about `count`
 * ticks (1, 2 or 5 times a power of ten, whichever is nearest in ratio), ends floored and
 * ceiled to it, repeated until the step no longer changes.
 */
export function niceExtent(e: Extent, count = 10): Extent {
  let { min, max } = e;
  let previous = 0;
  for (let i = 0; i < 10 && max > min; i++) {
    const raw = (max - min) / count;
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    const error = raw / power;
    const step = power * (error >= Math.sqrt(50) ? 10 : error >= Math.sqrt(10) ? 5 : error >= Math.SQRT2 ? 2 : 1);
    if (step === previous) {
      break;
    }
    const round = (v: number): number => Number(v.toPrecision(12));
    min = round(Math.floor(min / step) * step);
    max = round(Math.ceil(max / step) * step);
    previous = step;
  }
  return { min, max };
}

/** A duration in seconds as the relative axis labels it: "45s", "12.5 min", "3.2 hr", "2 d". */
export function formatDuration(seconds: number): string {
  const a = Math.abs(seconds);
  const fmt = (v: number): string => Number(v.toPrecision(3)).toString();
  if (a < 60) {
    return `${fmt(seconds)}s`;
  }
  if (a < 3600) {
    return `${fmt(seconds / 60)} min`;
  }
  if (a < 86400) {
    return `${fmt(seconds / 3600)} hr`;
  }
  return `${fmt(seconds / 86400)} d`;
}

/**
 * A wall-clock tick: the time of day when the whole axis lies within one day, the date
 * (and time) otherwise, so runs from different days are not mistaken for the same hour.
 */
export function formatWallTime(seconds: number, axisSpanSeconds: number): string {
  const d = new Date(seconds * 1000);
  const pad = (n: number): string => String(n).padStart(2, '0');
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  if (axisSpanSeconds < 86400) {
    return time;
  }
  const date = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  return axisSpanSeconds < 7 * 86400 ? `${date.slice(5)} ${time.slice(0, 5)}` : date;
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

/** Tags matching a filter: a regular expression, or a plain substring when it is not one. */
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

/**
 * The index of the point of `xs` (ascending, as steps and wall times are) nearest `x`, or -1
 * when there are none. Ties go to the earlier point.
 */
export function nearestIndex(xs: number[], x: number): number {
  if (!xs.length) {
    return -1;
  }
  let lo = 0;
  let hi = xs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid] < x) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo > 0 && x - xs[lo - 1] <= xs[lo] - x ? lo - 1 : lo;
}

/**
 * The indices of `xs` (ascending) a chart zoomed to `range` draws: those inside it and one
 * beyond each end, so lines run on to the edges of the plot. [start, end), end exclusive.
 */
export function indicesInRange(xs: number[], range: Extent): [number, number] {
  let start = 0;
  while (start < xs.length && xs[start] < range.min) {
    start++;
  }
  let end = start;
  while (end < xs.length && xs[end] <= range.max) {
    end++;
  }
  return [Math.max(0, start - 1), Math.min(xs.length, end + 1)];
}

/** One run's row in a chart's hover readout, as TensorBoard's tooltip lists it. */
export interface Readout {
  run: string;
  smoothed: number | null;
  value: number | null;
  step: number;
  wallTime: number;
  /** Seconds since the run's first point. */
  relative: number;
  /** The point's x on the chart's axis. */
  x: number;
}

/**
 * The hover readout of one line at axis position `x`: its point nearest `x` (`xs` are the
 * series' x values on the chart's axis, `smoothed` its smoothed values), or null when the
 * series has no points.
 */
export function readoutAt(
  series: ScalarSeries,
  xs: number[],
  smoothed: (number | null)[],
  x: number
): Readout | null {
  const i = nearestIndex(xs, x);
  if (i < 0) {
    return null;
  }
  return {
    run: series.run,
    smoothed: smoothed[i],
    value: series.values[i],
    step: series.steps[i],
    wallTime: series.wallTimes[i],
    relative: series.wallTimes[i] - series.wallTimes[0],
    x: xs[i]
  };
}
