/**
 * What the notebook widgets translate between the kernel's traits and the Board's views.
 * Pure functions, no DOM.
 *
 *   detailRows                    an op's creation site and last values as detail rows
 *   fromKernelSeries              the kernel's scalar series as the charts' ScalarSeries
 *   fromKernelHistograms          the kernel's histogram series as the views' HistogramSeries
 */
import { HistogramValue } from './histogram';
import { ScalarSeries } from './series';

/** An op's details as the kernel sends them (nbflow.notebook.display.op_details). */
export interface KernelDetails {
  name?: string;
  created?: { cell?: string; file?: string; line?: number; source?: string };
  values?: Record<string, string>;
}

/** The rows the kernel adds to an op's details: where it was created and its last values. */
export function detailRows(details: KernelDetails): [string, string][] {
  const rows: [string, string][] = [];
  const c = details.created;
  if (c) {
    const where = c.cell ? `cell '${c.cell}'` : c.file ?? '?';
    rows.push(['created', `${where}, line ${c.line ?? '?'}`]);
    if (c.source) {
      rows.push(['source', c.source]);
    }
  }
  for (const [tensor, value] of Object.entries(details.values ?? {})) {
    rows.push([`last ${tensor}`, value]);
  }
  return rows;
}

/** One scalar series as the kernel sends it (nbflow.notebook.widgets.scalars). */
export interface KernelSeries {
  run: string;
  tag: string;
  steps: number[];
  wall_times: number[];
  values: (number | null)[];
}

export function fromKernelSeries(series: KernelSeries[]): ScalarSeries[] {
  return series.map(s => ({
    run: s.run,
    tag: s.tag,
    steps: s.steps,
    wallTimes: s.wall_times,
    values: s.values,
    nextOffset: s.steps.length
  }));
}

/**
 * One histogram series as the kernel sends it (nbflow.notebook.widgets.histograms): values in
 * the JSON of the Board's histograms route (nbflow.board.series.histogram_json).
 */
export interface KernelHistograms {
  run: string;
  tag: string;
  steps: number[];
  wall_times: number[];
  values: HistogramValue[];
}

/** The kernel's histogram series as the Histograms and Distributions views' series. */
export function fromKernelHistograms(series: KernelHistograms[]): {
  run: string;
  tag: string;
  steps: number[];
  values: HistogramValue[];
  nextOffset: number;
}[] {
  return series.map(s => ({ run: s.run, tag: s.tag, steps: s.steps, values: s.values, nextOffset: s.steps.length }));
}

/**
 * The DOM event a notebook widget dispatches (bubbling from its output) to open the cell that
 * created an op: `detail` is `{cell, line}`. A widget has no access to JupyterLab's shell; the
 * labextension listens on the document and calls `preventDefault` when it opened the cell.
 */
export const OPEN_CELL_EVENT = 'nbflow-open-cell';
