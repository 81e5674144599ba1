/**
 * Runs side by side: several log directories at once, a stable colour per run, and the runs
 * table (hyperparameters, sorting, filtering, which runs are shown). Pure functions, no DOM.
 *
 *   parseLogdirSpec   "logs" or TensorBoard's --logdir_spec "a:logs/x,b:logs/y"
 *   runId             the name a run goes by on the board: its folder, prefixed by its logdir's
 *                     name when there are several
 *   RunColors         a colour per run, given once and kept: a run keeps its colour when others
 *                     appear, disappear or are hidden
 *   hparamColumns / sortRuns / filterRuns   the runs table
 */

/** One log directory of the board: a name (may be empty for a lone directory) and a path. */
export interface LogdirEntry {
  name: string;
  path: string;
}

/**
 * The log directories a board shows. A plain path is one directory; TensorBoard's
 * `--logdir_spec` form `name:path,name:path` names several (an entry without `name:` is named
 * after its path). A Windows drive (`C:/...`) is a path, not a name.
 */
export function parseLogdirSpec(spec: string): LogdirEntry[] {
  const entries: LogdirEntry[] = [];
  for (const raw of spec.split(',')) {
    const part = raw.trim();
    if (!part) {
      continue;
    }
    const m = /^([^:/\\]+):(.*)$/.exec(part);
    if (m && !/^[A-Za-z]:\\/.test(part)) {
      entries.push({ name: m[1].trim(), path: m[2].trim() || '.' });
    } else {
      entries.push({ name: '', path: part });
    }
  }
  if (entries.length === 0) {
    return [{ name: '', path: '.' }];
  }
  if (entries.length > 1) {
    for (const e of entries) {
      e.name = e.name || e.path;
    }
  }
  const seen = new Set<string>();
  for (const e of entries) {
    if (seen.has(e.name) && entries.length > 1) {
      throw new Error(`logdir name ${JSON.stringify(e.name)} is given twice in ${JSON.stringify(spec)}`);
    }
    seen.add(e.name);
  }
  return entries;
}

/** The spec back as text: the inverse of parseLogdirSpec. */
export function formatLogdirSpec(entries: LogdirEntry[]): string {
  return entries.map(e => (e.name && e.name !== e.path ? `${e.name}:${e.path}` : e.path)).join(',');
}

/**
 * A run's name on the board: the run's folder (relative to its log directory; "." for the
 * directory itself), prefixed with the directory's name when the board shows several.
 */
export function runId(entry: LogdirEntry, run: string, several: boolean): string {
  if (!several || !entry.name) {
    return run;
  }
  return run === '.' || run === '' ? entry.name : `${entry.name}/${run}`;
}

/** Ten distinct colours (Tableau 10), given to runs in the order they are first seen. */
export const RUN_PALETTE = [
  '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd',
  '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'
];

/**
 * A colour per run, stable for the board's lifetime: the n-th run ever seen gets palette
 * colour n (mod 10), whatever runs appear later, sort before it, or are hidden or deleted.
 */
export class RunColors {
  private given = new Map<string, number>();

  constructor(private palette: string[] = RUN_PALETTE) {}

  /** Give colours to runs not seen before, in the order listed. */
  assign(runs: Iterable<string>): void {
    for (const r of runs) {
      if (!this.given.has(r)) {
        this.given.set(r, this.given.size);
      }
    }
  }

  color(run: string): string {
    this.assign([run]);
    return this.palette[this.given.get(run)! % this.palette.length];
  }

  /** Forget every run (a new set of log directories). */
  clear(): void {
    this.given.clear();
  }
}

/** A hyperparameter's value, as TensorBoard's HParams plugin stores it. */
export type HParamValue = number | string | boolean;

/** One row of the runs table: hyperparameters, and metrics (each scalar tag's last value). */
export interface RunRow {
  id: string;
  hparams: Record<string, HParamValue>;
  metrics?: Record<string, number | null>;
}

/** The hyperparameter names over all rows, sorted: the table's columns after the run name. */
export function hparamColumns(rows: RunRow[]): string[] {
  return [...new Set(rows.flatMap(r => Object.keys(r.hparams)))].sort();
}

/** Metric columns (as TensorBoard's HParams table: a scalar tag's last value) are named so. */
export const METRIC = 'metric:';

/** The metric columns over all rows: `metric:<tag>`, sorted by tag. */
export function metricColumns(rows: RunRow[]): string[] {
  return [...new Set(rows.flatMap(r => Object.keys(r.metrics ?? {})))].sort().map(t => METRIC + t);
}

/** A row's value in a column: "run", a hyperparameter, or `metric:<tag>`. */
export function cellValue(row: RunRow, column: string): HParamValue | undefined {
  if (column === 'run') {
    return row.id;
  }
  if (column.startsWith(METRIC)) {
    const v = row.metrics?.[column.slice(METRIC.length)];
    return v === null ? undefined : v;
  }
  return row.hparams[column];
}

/**
 * Natural order of names: digit runs (with a decimal part) compare as numbers, so "run2"
 * precedes "run10" and "lr0.03" precedes "lr0.1".
 */
export function naturalCompare(a: string, b: string): number {
  const split = (s: string): string[] => s.split(/(\d+(?:\.\d+)?)/);
  const pa = split(a);
  const pb = split(b);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const numeric = i % 2 === 1;
    const c = numeric ? Number(pa[i]) - Number(pb[i]) : pa[i].localeCompare(pb[i]);
    if (c) {
      return c;
    }
  }
  return pa.length - pb.length || a.localeCompare(b);
}

export function formatHParam(v: HParamValue | undefined): string {
  if (v === undefined) {
    return '';
  }
  if (typeof v === 'number') {
    return Number.isInteger(v) ? String(v) : Number(v.toPrecision(6)).toString();
  }
  return String(v);
}

/**
 * Rows sorted by a column: "run" (the run name), a hyperparameter or a metric. Numbers compare as numbers,
 * text as text (numbers before text); runs missing the value come last in both directions.
 * Ties keep the run-name order.
 */
export function sortRuns(rows: RunRow[], column: string, descending = false): RunRow[] {
  const value = (r: RunRow): HParamValue | undefined => cellValue(r, column);
  const byName = (a: RunRow, b: RunRow): number => naturalCompare(a.id, b.id);
  const compare = (a: HParamValue, b: HParamValue): number => {
    if (typeof a === 'number' && typeof b === 'number') {
      return a - b;
    }
    if (typeof a === 'number') {
      return -1;
    }
    if (typeof b === 'number') {
      return 1;
    }
    return naturalCompare(String(a), String(b));
  };
  return rows.slice().sort((a, b) => {
    const va = value(a);
    const vb = value(b);
    if (va === undefined || vb === undefined) {
      return va === vb ? byName(a, b) : va === undefined ? 1 : -1;
    }
    const c = column === 'run' ? byName(a, b) : compare(va, vb);
    return (descending ? -c : c) || byName(a, b);
  });
}

/**
 * Rows matching a filter: a regular expression (or, when it is not one, a substring), tried
 * case-insensitively on the run name and on each hyperparameter as `name=value`, so
 * `lr=0.01` or `optimizer=adam` pick runs by their settings.
 */
export function filterRuns(rows: RunRow[], filter: string): RunRow[] {
  const f = filter.trim();
  if (!f) {
    return rows;
  }
  let test: (s: string) => boolean;
  try {
    const re = new RegExp(f, 'i');
    test = s => re.test(s);
  } catch {
    test = s => s.toLowerCase().includes(f.toLowerCase());
  }
  return rows.filter(
    r => test(r.id) || Object.entries(r.hparams).some(([k, v]) => test(`${k}=${formatHParam(v)}`))
  );
}
