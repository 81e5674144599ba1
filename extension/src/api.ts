/** The board's server routes (nbflow/board/handlers.py), through Jupyter's own connection. */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import type { GraphDef } from './model/graphDef';
import type { HistogramValue } from './model/histogram';
import type { HParamValue, LogdirEntry } from './model/runs';
import type { ScalarsReply } from './model/series';
import type { TraceJson } from './model/trace';

/** Something the server could not read in a run's files (a damaged record, a refused link). */
export interface RunWarning {
  file: string;
  offset: number;
  message: string;
}

export interface RunTags {
  warnings?: RunWarning[];
  scalars: string[];
  histograms: string[];
  images: string[];
  graph: boolean;
  /** Graphs logged so far: it grows when a re-run logs its graph again. */
  graph_version?: number;
  traces: string[];
}

export interface RunInfo {
  name: string;
  tags: RunTags;
  /** The run's hyperparameters (TensorBoard HParams summaries in its events). */
  hparams?: Record<string, HParamValue>;
}

export interface SeriesReply<T> {
  run: string;
  tag: string;
  offset: number;
  next_offset: number;
  total: number;
  steps: number[];
  wall_times: number[];
  values: T[];
}

export interface ImageInfo {
  index: number;
  width: number;
  height: number;
}

export class BoardApi {
  /** `entry`: the log directory's name on a board showing several (model/runs.ts). */
  readonly entry: LogdirEntry;

  constructor(
    readonly logdir: string,
    private settings = ServerConnection.makeSettings(),
    entry?: LogdirEntry
  ) {
    this.entry = entry ?? { name: '', path: logdir };
  }

  url(route: string, query: Record<string, string | number> = {}): string {
    const params = new URLSearchParams({ logdir: this.logdir });
    for (const [k, v] of Object.entries(query)) {
      params.set(k, String(v));
    }
    return URLExt.join(this.settings.baseUrl, 'nbflow', 'api', route) + '?' + params.toString();
  }

  async fetch(route: string, query: Record<string, string | number> = {}): Promise<Response> {
    const response = await ServerConnection.makeRequest(this.url(route, query), {}, this.settings);
    if (!response.ok) {
      let message = response.statusText;
      try {
        message = (await response.json()).message ?? message;
      } catch {
        // not JSON
      }
      throw new Error(`${route}: ${response.status} ${message}`);
    }
    return response;
  }

  async json<T>(route: string, query: Record<string, string | number> = {}): Promise<T> {
    return (await this.fetch(route, query)).json() as Promise<T>;
  }

  static async root(settings = ServerConnection.makeSettings()): Promise<string> {
    const url = URLExt.join(settings.baseUrl, 'nbflow', 'api', 'root');
    const response = await ServerConnection.makeRequest(url, {}, settings);
    return response.ok ? (await response.json()).root : '';
  }

  runs(): Promise<{ logdir: string; runs: RunInfo[] }> {
    return this.json('runs');
  }

  scalars(run: string, tag: string, offset: number, maxPoints = 100000): Promise<ScalarsReply> {
    return this.json('scalars', { run, tag, offset, max_points: maxPoints });
  }

  histograms(run: string, tag: string, offset: number): Promise<SeriesReply<HistogramValue>> {
    return this.json('histograms', { run, tag, offset });
  }

  images(run: string, tag: string, offset: number): Promise<SeriesReply<ImageInfo>> {
    return this.json('images', { run, tag, offset });
  }

  async imageBlob(run: string, tag: string, index: number): Promise<Blob> {
    return (await this.fetch('image', { run, tag, index })).blob();
  }

  async graph(run: string): Promise<GraphDef> {
    return (await this.json<{ graph_def: GraphDef }>('graph', { run })).graph_def;
  }

  trace(run: string, name: string): Promise<TraceJson> {
    return this.json('trace', { run, name });
  }
}
