/**
 * The runs table beside the charts: one row per run with its colour, a checkbox that shows or
 * hides it, and its hyperparameters (what `start_training(arguments=...)` recorded). Columns
 * and, as in TensorBoard's HParams table, each scalar tag's last value (the metric columns,
 * in italics). Columns sort on a click on their header; the filter (a regex on run names and `name=value`
 * settings) narrows both the table and the charts, as TensorBoard's run filter does. New runs
 * are shown; a hidden run stays hidden while the board lives.
 */
import {
  METRIC,
  RunColors,
  RunRow,
  cellValue,
  filterRuns,
  formatHParam,
  hparamColumns,
  metricColumns,
  sortRuns
} from '../model/runs';
import { formatNumber, html } from './dom';

export class RunsView {
  readonly node: HTMLElement;
  /** Called after the user shows, hides or filters runs. */
  onChange: () => void = () => undefined;
  private rows: RunRow[] = [];
  private hidden = new Set<string>();
  private filter = '';
  private sortColumn = 'run';
  private descending = false;
  private table: HTMLTableElement;
  private count: HTMLElement;
  private filterInput: HTMLInputElement;

  constructor(private colors: RunColors, private label: (run: string) => string = r => r) {
    this.node = html('div', { class: 'nbflow-runs' });
    const bar = html('div', { class: 'nbflow-runs-bar' }, this.node);
    this.filterInput = html('input', { type: 'search', class: 'nbflow-run-filter', placeholder: 'Filter runs (regex, lr=0.1)' }, bar);
    this.filterInput.addEventListener('input', () => {
      this.filter = this.filterInput.value;
      this.render();
      this.onChange();
    });
    this.count = html('span', { class: 'nbflow-runs-count' }, bar);
    this.table = html('table', { class: 'nbflow-runs-table' }, this.node);
    this.render();
  }

  /** The runs listed (in the board's order) with their hyperparameters. */
  setRuns(rows: RunRow[]): void {
    const same = JSON.stringify(rows) === JSON.stringify(this.rows);
    this.rows = rows;
    this.colors.assign(rows.map(r => r.id));
    if (!same) {
      this.render();
    }
  }

  /** Whether a run's series are drawn: checked and matching the filter. */
  isVisible(run: string): boolean {
    if (this.hidden.has(run)) {
      return false;
    }
    const row = this.rows.find(r => r.id === run) ?? { id: run, hparams: {} };
    return filterRuns([row], this.filter).length > 0;
  }

  setVisible(run: string, visible: boolean): void {
    if (visible) {
      this.hidden.delete(run);
    } else {
      this.hidden.add(run);
    }
    this.render();
    this.onChange();
  }

  setFilter(filter: string): void {
    this.filter = this.filterInput.value = filter;
    this.render();
    this.onChange();
  }

  sortBy(column: string, descending?: boolean): void {
    this.descending = descending ?? (column === this.sortColumn ? !this.descending : false);
    this.sortColumn = column;
    this.render();
  }

  private render(): void {
    const shown = sortRuns(filterRuns(this.rows, this.filter), this.sortColumn, this.descending);
    const columns = [...hparamColumns(this.rows), ...metricColumns(this.rows)];
    this.table.textContent = '';
    const head = html('tr', {}, html('thead', {}, this.table));
    const allCell = html('th', { class: 'nbflow-runs-check' }, head);
    const all = html('input', { type: 'checkbox', class: 'nbflow-run-toggle-all', title: 'Show or hide all listed runs' }, allCell);
    const checked = shown.filter(r => !this.hidden.has(r.id)).length;
    all.checked = shown.length > 0 && checked === shown.length;
    all.indeterminate = checked > 0 && checked < shown.length;
    all.addEventListener('change', () => {
      for (const r of shown) {
        if (all.checked) {
          this.hidden.delete(r.id);
        } else {
          this.hidden.add(r.id);
        }
      }
      this.render();
      this.onChange();
    });
    for (const column of ['run', ...columns]) {
      const arrow = column === this.sortColumn ? (this.descending ? ' ▼' : ' ▲') : '';
      const metric = column.startsWith(METRIC);
      const name = column === 'run' ? 'Run' : metric ? column.slice(METRIC.length) : column;
      const th = html('th', { 'data-column': column, class: metric ? 'nbflow-metric' : '', title: metric ? `${name}: last value; click to sort` : `Sort by ${name}` }, head, name + arrow);
      th.addEventListener('click', () => this.sortBy(column));
    }
    const body = html('tbody', {}, this.table);
    for (const r of shown) {
      const tr = html('tr', { 'data-run': r.id }, body);
      const box = html('input', { type: 'checkbox', class: 'nbflow-run-toggle' }, html('td', { class: 'nbflow-runs-check' }, tr));
      box.checked = !this.hidden.has(r.id);
      box.addEventListener('change', () => this.setVisible(r.id, box.checked));
      const name = html('td', { class: 'nbflow-runs-name', title: r.id }, tr);
      html('span', { class: 'nbflow-swatch', style: `background:${this.colors.color(r.id)}` }, name);
      name.append(this.label(r.id));
      for (const c of columns) {
        const v = cellValue(r, c);
        const metric = c.startsWith(METRIC);
        // metrics with four significant digits, zeros kept, so a column lines up
        const fixed = typeof v === 'number' && Math.abs(v) >= 1e-3 && Math.abs(v) < 1e5;
        const text = metric && typeof v === 'number' ? (fixed ? v.toPrecision(4) : formatNumber(v)) : formatHParam(v);
        html('td', { 'data-column': c, class: `${typeof v === 'number' ? 'nbflow-num' : ''}${metric ? ' nbflow-metric' : ''}` }, tr, text);
      }
    }
    const hiddenCount = this.rows.length - shown.filter(r => !this.hidden.has(r.id)).length;
    this.count.textContent = `${this.rows.length} run${this.rows.length === 1 ? '' : 's'}${hiddenCount ? ` · ${hiddenCount} hidden` : ''}`;
  }
}
