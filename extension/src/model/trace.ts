/**
 * Chrome trace JSON -> the EEG view of a step (whitepaper §9.2): one row per (process,
 * thread), i.e. per device and executor thread, with the ops as intervals in µs, and flow
 * events ("s" then "f" or "t" with the same id: nbflow's and TensorFlow's tensor transfers) as
 * arrows between rows; plus the compute time and the output bytes per op name used to colour
 * the graph.
 */

export interface TraceEvent {
  name?: string;
  ph?: string;
  ts?: number;
  dur?: number;
  pid?: number | string;
  tid?: number | string;
  cat?: string;
  id?: number | string;
  args?: Record<string, unknown>;
}

export interface TraceJson {
  traceEvents?: TraceEvent[];
}

export interface Interval {
  name: string;
  op: string;
  start: number;
  duration: number;
}

export interface TimelineRow {
  key: string;
  label: string;
  intervals: Interval[];
}

/** A flow arrow: from a row at a time to a row at a time (µs), e.g. a Send to its Recv. */
export interface Flow {
  name: string;
  fromRow: string;
  fromTs: number;
  toRow: string;
  toTs: number;
}

export interface Timeline {
  rows: TimelineRow[];
  flows: Flow[];
  start: number;
  end: number;
}

function eventsOf(trace: TraceJson | TraceEvent[]): TraceEvent[] {
  return Array.isArray(trace) ? trace : trace.traceEvents ?? [];
}

/** The op a trace event ran: args.name (nbflow, TF) or else the event name. */
export function opNameOf(e: TraceEvent): string {
  const n = e.args?.['name'];
  return typeof n === 'string' ? n : e.name ?? '';
}

export function buildTimeline(trace: TraceJson | TraceEvent[]): Timeline {
  const events = eventsOf(trace);
  const processNames = new Map<string, string>();
  const threadNames = new Map<string, string>();
  for (const e of events) {
    if (e.ph === 'M' && typeof e.args?.['name'] === 'string') {
      if (e.name === 'process_name') {
        processNames.set(String(e.pid), e.args['name'] as string);
      } else if (e.name === 'thread_name') {
        threadNames.set(`${e.pid}/${e.tid}`, e.args['name'] as string);
      }
    }
  }
  const rows = new Map<string, TimelineRow>();
  let start = Infinity;
  let end = -Infinity;
  for (const e of events) {
    if (e.ph !== 'X' || typeof e.ts !== 'number') {
      continue;
    }
    const key = `${e.pid}/${e.tid}`;
    let row = rows.get(key);
    if (!row) {
      const p = processNames.get(String(e.pid)) ?? `pid ${e.pid}`;
      const t = threadNames.get(key) ?? `tid ${e.tid}`;
      row = { key, label: `${p} / ${t}`, intervals: [] };
      rows.set(key, row);
    }
    const duration = Math.max(0, e.dur ?? 0);
    const op = typeof e.args?.['op'] === 'string' ? (e.args['op'] as string) : e.cat ?? '';
    row.intervals.push({ name: opNameOf(e), op, start: e.ts, duration });
    start = Math.min(start, e.ts);
    end = Math.max(end, e.ts + duration);
  }
  const sorted = [...rows.values()].sort((a, b) => a.label.localeCompare(b.label, undefined, { numeric: true }));
  for (const r of sorted) {
    r.intervals.sort((a, b) => a.start - b.start);
  }
  return {
    rows: sorted,
    flows: flowsOf(events).filter(f => rows.has(f.fromRow) && rows.has(f.toRow)),
    start: start === Infinity ? 0 : start,
    end: end === -Infinity ? 0 : end
  };
}

/** Flow arrows: each flow start ("s") joined to the next step or end ("t", "f") of its id. */
export function flowsOf(events: TraceEvent[]): Flow[] {
  const open = new Map<string, TraceEvent>();
  const flows: Flow[] = [];
  const timed = events.filter(e => (e.ph === 's' || e.ph === 't' || e.ph === 'f') && typeof e.ts === 'number');
  for (const e of [...timed].sort((a, b) => a.ts! - b.ts!)) {
    const id = `${e.cat ?? ''}/${String(e.id)}`;
    const from = open.get(id);
    if (e.ph === 's') {
      open.set(id, e);
    } else if (from) {
      flows.push({ name: e.name ?? from.name ?? '', fromRow: `${from.pid}/${from.tid}`, fromTs: from.ts!, toRow: `${e.pid}/${e.tid}`, toTs: e.ts! });
      if (e.ph === 'f') {
        open.delete(id);
      } else {
        open.set(id, e);
      }
    }
  }
  return flows;
}

/** Total duration (µs) per op name over all complete events. */
export function opTimes(trace: TraceJson | TraceEvent[]): Map<string, number> {
  const times = new Map<string, number>();
  for (const e of eventsOf(trace)) {
    if (e.ph === 'X') {
      const n = opNameOf(e);
      times.set(n, (times.get(n) ?? 0) + Math.max(0, e.dur ?? 0));
    }
  }
  return times;
}

/**
 * Bytes allocated for each op's outputs, from the figures a trace carries with its events
 * (nbflow's timeline writes `args.output0: "float32[2,3] (24 B)"`). Empty when the trace has
 * none: then the graph view offers no memory colouring.
 */
export function opBytes(trace: TraceJson | TraceEvent[]): Map<string, number> {
  const bytes = new Map<string, number>();
  for (const e of eventsOf(trace)) {
    if (e.ph !== 'X' || !e.args) {
      continue;
    }
    let total = 0;
    let found = false;
    for (const [k, v] of Object.entries(e.args)) {
      const m = /^output\d+$/.test(k) && typeof v === 'string' ? /\((\d+) B\)\s*$/.exec(v) : null;
      if (m) {
        total += Number(m[1]);
        found = true;
      }
    }
    if (found) {
      const n = opNameOf(e);
      bytes.set(n, (bytes.get(n) ?? 0) + total);
    }
  }
  return bytes;
}
