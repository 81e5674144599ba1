/**
 * JupyterLab plugin: the nbflow Board as a main-area panel, opened from the launcher, the
 * command palette and from kernels (a display of MIME type application/vnd.nbflow.board+json,
 * e.g. from `%dataflow_board LOGDIR`); restored on reload.
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, MainAreaWidget, WidgetTracker } from '@jupyterlab/apputils';
import { ILauncher } from '@jupyterlab/launcher';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { Widget } from '@lumino/widgets';

import { BoardApi } from './api';
import { BoardPanel } from './board';
import { BookkeepingRules } from './model/auxiliary';
import { OPEN_CELL_EVENT } from './model/notebook';
import { formatLogdirSpec, parseLogdirSpec } from './model/runs';
import { relativeLogdir } from './model/series';

export const COMMAND = 'nbflow:open-board';
export const MIME_TYPE = 'application/vnd.nbflow.board+json';
/**
 * The renderer's rank. JupyterLab picks, among a display's MIME types it can render, the one
 * whose renderer has the LOWEST rank; HTML's is 50, so at 50 the `text/html` fallback that
 * `%dataflow_board` also sends could win and the panel would never open. Below HTML, above
 * nothing the board competes with.
 */
export const MIME_RANK = 10;

interface BoardArgs {
  logdir?: string;
  bookkeeping?: Partial<BookkeepingRules>;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'nbflow:board',
  description: 'nbflow Board: graph, scalars, histograms, images and timelines of event logs',
  autoStart: true,
  optional: [ILayoutRestorer, ICommandPalette, ILauncher, IRenderMimeRegistry],
  activate: (
    app: JupyterFrontEnd,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    launcher: ILauncher | null,
    rendermime: IRenderMimeRegistry | null
  ) => {
    const tracker = new WidgetTracker<MainAreaWidget<BoardPanel>>({ namespace: 'nbflow-board' });
    // A notebook graph widget's "created at" link: the widget cannot reach the shell, we can.
    document.addEventListener(OPEN_CELL_EVENT, ev => {
      const { cell, line } = (ev as CustomEvent<{ cell: string; line: number }>).detail ?? {};
      if (cell && openNotebookCell(app, cell, Number(line) || 1)) {
        ev.preventDefault();
      }
    });
    let root: Promise<string> | null = null;

    app.commands.addCommand(COMMAND, {
      label: args =>
        args.isLauncher ? 'nbflow Board' : args.logdir ? `nbflow Board: ${args.logdir}` : 'Open Board',
      caption: 'Open the nbflow Board on a log directory',
      execute: async args => {
        const { logdir = '.', bookkeeping } = args as BoardArgs;
        // one directory, or several (name:path,...): each path relative to the board root
        const entries = parseLogdirSpec(String(logdir));
        for (const entry of entries) {
          let path = relativeLogdir(entry.path, '');
          if (path === null) {
            root = root ?? BoardApi.root();
            path = relativeLogdir(entry.path, await root);
            if (path === null) {
              throw new Error(`log directory ${entry.path} is outside the board root ${await root}`);
            }
          }
          entry.name = entry.name === entry.path ? path : entry.name;
          entry.path = path;
        }
        const relative = formatLogdirSpec(entries);
        const existing = tracker.find(w => w.content.logdir === relative);
        if (existing) {
          if (bookkeeping) {
            existing.content.setBookkeeping(bookkeeping);
          }
          app.shell.activateById(existing.id);
          return existing;
        }
        const content = new BoardPanel({ logdir: relative, bookkeeping, openCell: (cell, line) => openNotebookCell(app, cell, line) });
        const widget = new MainAreaWidget({ content });
        widget.id = content.id;
        widget.title.label = content.title.label;
        widget.title.caption = content.title.caption;
        widget.title.closable = true;
        content.title.changed.connect(() => (widget.title.label = content.title.label));
        await tracker.add(widget);
        app.shell.add(widget, 'main');
        app.shell.activateById(widget.id);
        return widget;
      }
    });

    palette?.addItem({ command: COMMAND, category: 'nbflow' });
    launcher?.add({ command: COMMAND, category: 'Other', rank: 1 });
    if (restorer) {
      void restorer.restore(tracker, {
        command: COMMAND,
        args: w => ({ logdir: w.content.logdir }),
        name: w => w.content.logdir
      });
    }

    const opened = new Set<string>();
    rendermime?.addFactory(
      {
        safe: true,
        mimeTypes: [MIME_TYPE],
        defaultRank: MIME_RANK,
        createRenderer: () => new BoardLink(app, opened)
      },
      MIME_RANK
    );
  }
};

/** The parts of a notebook panel that jumping to a cell needs (no dependency on the notebook package). */
interface NotebookLike {
  id: string;
  content: {
    widgets: readonly { model: { id: string }; editor?: { setCursorPosition(p: { line: number; column: number }): void } | null }[];
    activeCellIndex: number;
    scrollToItem?(index: number): Promise<void>;
  };
}

/**
 * Activate the open notebook holding the cell with this id, select the cell and put the cursor
 * on `line` (1-based). Returns false when no open notebook has it.
 */
export function openNotebookCell(app: JupyterFrontEnd, cell: string, line: number): boolean {
  for (const widget of app.shell.widgets('main')) {
    const content = (widget as unknown as Partial<NotebookLike>).content;
    const index = content?.widgets?.findIndex?.(c => c?.model?.id === cell) ?? -1;
    if (!content || index < 0) {
      continue;
    }
    app.shell.activateById(widget.id);
    content.activeCellIndex = index;
    const place = (): void =>
      content.widgets[index].editor?.setCursorPosition({ line: Math.max(0, line - 1), column: 0 });
    void (content.scrollToItem?.(index) ?? Promise.resolve()).then(place);
    return true;
  }
  return false;
}

/** The output of `%dataflow_board`: opens (or focuses) the board once, and offers a button. */
class BoardLink extends Widget {
  constructor(private app: JupyterFrontEnd, private opened: Set<string>) {
    super();
    this.addClass('nbflow-board-link');
  }

  async renderModel(model: { data: Record<string, unknown> }): Promise<void> {
    const args = (model.data[MIME_TYPE] ?? {}) as BoardArgs;
    const logdir = String(args.logdir ?? '.');
    this.node.textContent = '';
    const button = document.createElement('button');
    button.className = 'nbflow-button';
    button.textContent = `Open nbflow Board on ${logdir}`;
    button.addEventListener('click', () => void this.app.commands.execute(COMMAND, { ...args, logdir } as never));
    this.node.appendChild(button);
    if (!this.opened.has(logdir)) {
      this.opened.add(logdir);
      try {
        await this.app.commands.execute(COMMAND, { ...args, logdir } as never);
      } catch (err) {
        const note = document.createElement('div');
        note.textContent = String((err as Error).message ?? err);
        this.node.appendChild(note);
      }
    }
  }
}

export default plugin;
