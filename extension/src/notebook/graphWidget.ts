/**
 * The notebook's graph widget (nbflow.notebook.widgets.graph.GraphWidget): the Board's
 * GraphView inside a cell output. The kernel sends the GraphDef, the bookkeeping rules, the ops
 * to highlight (those the cell built) and, for a selected op, where it was created and its
 * value from the last run; the view reports expanded groups, the selected op and the colour
 * mode back, so the Python object always knows what is on screen. The kernel asks the view to
 * reveal an op with a message {type: 'reveal', name}: the view expands what hides it and
 * reports the expanded groups back. The link to the cell that created an op asks JupyterLab
 * to open it with a DOM event (`OPEN_CELL_EVENT`), as a widget has no access to the shell.
 */
import { GraphDef } from '../model/graphDef';
import { KernelDetails, OPEN_CELL_EVENT, detailRows } from '../model/notebook';
import { ColorMode, GraphView } from '../views/graphView';
import { html } from '../views/dom';
import { RenderProps, installLayoutWorker, save } from './anywidget';

interface Rules {
  max_degree: number;
  op_types: string[];
  name_patterns: string[];
}

function render({ model, el }: RenderProps): () => void {
  installLayoutWorker();
  const rules = model.get('rules') as Rules;
  let selectedHere = '';
  const view = new GraphView(
    { maxDegree: rules.max_degree, opTypes: rules.op_types, namePatterns: rules.name_patterns },
    {
      expanded: paths => save(model, 'expanded', [...paths].sort()),
      selected: name => {
        selectedHere = name;
        save(model, 'selected', name);
      },
      colorMode: (mode: ColorMode) => {
        if (mode === 'device' || mode === 'structure') {
          save(model, 'color_by', mode);
        }
      },
      openCell: (cell: string, line: number) => {
        const ask = new CustomEvent(OPEN_CELL_EVENT, { bubbles: true, cancelable: true, detail: { cell, line } });
        el.dispatchEvent(ask);
        return ask.defaultPrevented; // JupyterLab's nbflow extension opened it
      }
    }
  );
  const root = html('div', { class: 'nbflow-notebook-graph' }, el);
  root.style.cssText = 'display:flex;flex-direction:column;height:520px;border:1px solid var(--jp-border-color2, #ddd)';
  const heading = html('div', { class: 'nbflow-notebook-title' }, root);
  heading.style.cssText = 'font-weight:600;padding:4px 8px';
  root.appendChild(view.node);

  const showTitle = (): void => {
    heading.textContent = model.get('title') || '';
    heading.style.display = heading.textContent ? '' : 'none';
  };
  const showGraph = (): void => {
    view.setExpanded(model.get('expanded') ?? []);
    view.setGraphDef(model.get('graph_def') as GraphDef);
  };
  const showExpanded = (): void => view.setExpanded(model.get('expanded') ?? []);
  const showHighlight = (): void => view.setHighlight(model.get('highlight') ?? []);
  const showColor = (): void => view.setColorMode(model.get('color_by') as ColorMode);
  const showSelected = (): void => {
    const name = model.get('selected') as string;
    if (name && name !== selectedHere) {
      selectedHere = name;
      view.reveal(name);
    }
  };
  const showDetails = (): void => {
    const d = model.get('details') as KernelDetails;
    if (d && d.name) {
      view.setExtraDetails(d.name, detailRows(d));
    }
  };
  const onMessage = (msg: { type?: string; name?: string }): void => {
    if (msg && msg.type === 'reveal' && msg.name) {
      selectedHere = msg.name;
      view.reveal(msg.name);
    }
  };
  const listeners: [string, (...args: any[]) => void][] = [
    ['msg:custom', onMessage],
    ['change:title', showTitle],
    ['change:graph_def', showGraph],
    ['change:expanded', showExpanded],
    ['change:highlight', showHighlight],
    ['change:color_by', showColor],
    ['change:selected', showSelected],
    ['change:details', showDetails]
  ];
  for (const [event, callback] of listeners) {
    model.on(event, callback);
  }
  showTitle();
  showHighlight();
  showColor();
  showGraph();
  showDetails();

  // The output is attached (and sized) after render returns: fit the graph once it has a size.
  let fitted = false;
  const resize = new ResizeObserver(() => {
    if (!fitted && view.node.getBoundingClientRect().width > 0) {
      fitted = true;
      view.fit();
    }
  });
  resize.observe(view.node);
  return () => {
    resize.disconnect();
    for (const [event, callback] of listeners) {
      model.off(event, callback);
    }
  };
}

export default { render };
