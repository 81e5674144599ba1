/**
 * The GraphDef as the graph view reads it: ops, their edges and what each op records, before any
 * grouping. The lowest layer of the view's model (model/graph.ts groups it into name scopes,
 * model/auxiliary.ts sets machinery aside, model/graphSeries.ts finds repeated structure).
 *
 * Pure functions, no DOM: the Board panel and the notebook widgets share them.
 *
 *   parseGraphDef     GraphDef JSON -> ops and edges (data and ^control inputs); each edge has a
 *                     kind: data, control, or reference (a variable into an op updating it)
 *   outputsOf         an op's outputs: dtype and shape, from `_output_types`/`_output_shapes`
 *   strokeWidthFor    an edge's stroke from the elements it carries, as TensorBoard weighs edges
 *   diffGraphs        what a re-run changed: ops added, removed and changed
 *   parseSource       where an op was created (`_source`: a file and line, or a notebook cell)
 */

export interface NodeDef {
  name: string;
  op: string;
  input?: string[];
  device?: string;
  attr?: Record<string, unknown>;
}

export interface GraphDef {
  node: NodeDef[];
  versions?: unknown;
}

export interface OpNode {
  name: string;
  op: string;
  device: string;
  attr: Record<string, unknown>;
  inputs: string[];
  /** Enclosing scope path ("" at top level). */
  scope: string;
  /** Innermost group holding the op: its scope, or a synthetic group splitting a large one. */
  group: string;
}

/**
 * How an edge is drawn: a tensor (data), an ordering constraint (control, dashed) or a
 * variable handed by reference to an op that updates it (Assign, ApplyAdam, …).
 */
export type EdgeKind = 'data' | 'control' | 'ref';

export interface OpEdge {
  src: string;
  dst: string;
  control: boolean;
  kind: EdgeKind;
  /** Output index of the source tensor; -1 for a control edge. */
  index: number;
}

/** Ops that hold a variable's storage. */
const VARIABLE_OPS = /^(VariableV2|Variable|VarHandleOp|TemporaryVariable)$/;
/**
 * Ops that update the variable given as an input in place. A GraphDef does not say which
 * inputs are references (that lives in TensorFlow's OpDef), so, like TensorBoard, the view
 * knows the update ops by type; an edge from a variable into one of them is a reference edge.
 */
const UPDATE_OPS = /^(Assign|AssignAdd|AssignSub|AssignVariableOp|AssignAddVariableOp|AssignSubVariableOp|CountUpTo|(Resource)?(Sparse)?Apply\w+|(Resource)?Scatter\w+)$/;

/** The kind of an edge from `src` into `dst`. */
export function edgeKind(src: OpNode, dst: OpNode, control: boolean): EdgeKind {
  if (control) {
    return 'control';
  }
  return VARIABLE_OPS.test(src.op) && UPDATE_OPS.test(dst.op) ? 'ref' : 'data';
}

export interface Graph {
  ops: Map<string, OpNode>;
  edges: OpEdge[];
}

/** Parse an input spec: "^ctrl", "op:1" or "op". */
export function parseInput(spec: string): { name: string; index: number; control: boolean } {
  if (spec.startsWith('^')) {
    return { name: spec.slice(1), index: -1, control: true };
  }
  const colon = spec.lastIndexOf(':');
  const index = colon < 0 ? NaN : Number(spec.slice(colon + 1));
  return colon > 0 && Number.isInteger(index) && colon < spec.length - 1 && index >= 0
    ? { name: spec.slice(0, colon), index, control: false }
    : { name: spec, index: 0, control: false };
}

export function scopeOf(name: string): string {
  const i = name.lastIndexOf('/');
  return i < 0 ? '' : name.slice(0, i);
}

export function parseGraphDef(def: GraphDef): Graph {
  const ops = new Map<string, OpNode>();
  for (const n of def.node ?? []) {
    ops.set(n.name, {
      name: n.name,
      op: n.op,
      device: n.device ?? '',
      attr: n.attr ?? {},
      inputs: n.input ?? [],
      scope: scopeOf(n.name),
      group: scopeOf(n.name)
    });
  }
  const edges: OpEdge[] = [];
  for (const node of ops.values()) {
    for (const spec of node.inputs) {
      const { name, index, control } = parseInput(spec);
      const src = ops.get(name);
      if (src) {
        edges.push({ src: name, dst: node.name, control, index, kind: edgeKind(src, node, control) });
      }
    }
  }
  return { ops, edges };
}

/** Names in natural order: "op2" before "op10". */
export const naturalOrder = (a: string, b: string): number =>
  a.localeCompare(b, undefined, { numeric: true });

/** The last component of a slash-separated name: "a/b/c" -> "c". */
export function lastComponent(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** One output of an op: its dtype ("" when the GraphDef does not say) and shape (null: unknown rank). */
export interface TensorInfo {
  dtype: string;
  shape: (number | null)[] | null;
}

type AttrValue = { list?: AttrValue[]; shape?: (number | null)[] | null; type?: string } | unknown;

function attrList(value: AttrValue): AttrValue[] {
  const list = (value as { list?: AttrValue[] } | undefined)?.list;
  return Array.isArray(list) ? list : [];
}

function attrType(value: AttrValue): string {
  const t = (value as { type?: unknown } | undefined)?.type;
  return typeof t === 'string' ? t : '';
}

/**
 * An op's outputs as the GraphDef records them: shapes from `_output_shapes` (TensorFlow's
 * FileWriter adds it), dtypes from `_output_types` (nbflow adds it) or else from the attr that
 * names the output type (`dtype`, `T`, `out_type`, `DstT`, `output_type`).
 */
export function outputsOf(op: OpNode): TensorInfo[] {
  const shapes = attrList(op.attr['_output_shapes']).map(v => {
    const s = (v as { shape?: (number | null)[] | null } | undefined)?.shape;
    return Array.isArray(s) ? s : null;
  });
  const types = attrList(op.attr['_output_types']).map(attrType);
  let fallback = '';
  for (const k of ['dtype', 'T', 'out_type', 'DstT', 'output_type']) {
    fallback ||= attrType(op.attr[k]);
  }
  const n = Math.max(shapes.length, types.length, fallback ? 1 : 0);
  const out: TensorInfo[] = [];
  for (let i = 0; i < n; i++) {
    out.push({ dtype: types[i] ?? (shapes.length <= 1 ? fallback : ''), shape: i < shapes.length ? shapes[i] : null });
  }
  return out;
}

/** "float32[?,784]", "int64[]" (a scalar), "float32[…]" (unknown rank). */
export function formatTensor(t: TensorInfo): string {
  const dims = t.shape === null ? '…' : t.shape.map(d => (d === null || d < 0 ? '?' : String(d))).join(',');
  return `${t.dtype || '?'}[${dims}]`;
}

/** Number of elements, counting unknown dimensions as 1; 1 for an unknown shape. */
export function elementCount(t: TensorInfo): number {
  return (t.shape ?? []).reduce<number>((n, d) => n * (d === null || d < 0 ? 1 : d), 1);
}

/** The tensor "op:k" of a graph, or undefined when the op does not record it. */
export function tensorInfo(graph: Graph, tensor: string): TensorInfo | undefined {
  const colon = tensor.lastIndexOf(':');
  const op = graph.ops.get(tensor.slice(0, colon));
  return op ? outputsOf(op)[Number(tensor.slice(colon + 1))] : undefined;
}

/** Stroke width from tensor size, as TensorBoard weighs edges: 1 for a scalar, up to 6. */
export function strokeWidthFor(elements: number): number {
  return Math.max(1, Math.min(6, 0.6 + 0.6 * Math.log10(Math.max(1, elements))));
}

/** What a re-run changed, by op name. */
export interface GraphDiff {
  added: string[];
  removed: string[];
  /** Same name, but another type, inputs, device or attributes. */
  changed: string[];
}

function opFingerprint(op: OpNode): string {
  const attrs = Object.keys(op.attr)
    .filter(k => k !== '_source')  // moving a line in the cell is not a change to the graph
    .sort()
    .map(k => `${k}=${JSON.stringify(op.attr[k])}`);
  return [op.op, op.device, op.inputs.join(','), ...attrs].join('\u0000');
}

/** Ops added, removed and changed from `before` to `after` (each list in name order). */
export function diffGraphs(before: Graph, after: Graph): GraphDiff {
  const added: string[] = [];
  const changed: string[] = [];
  for (const [name, op] of after.ops) {
    const old = before.ops.get(name);
    if (!old) {
      added.push(name);
    } else if (opFingerprint(old) !== opFingerprint(op)) {
      changed.push(name);
    }
  }
  const removed = [...before.ops.keys()].filter(n => !after.ops.has(n));
  return { added: added.sort(naturalOrder), removed: removed.sort(naturalOrder), changed: changed.sort(naturalOrder) };
}

/** Where an op was created, as nbflow records it in the `_source` attr: "file:line" or "cell:ID#N:line". */
export interface SourceSite {
  cell?: string;
  executionCount?: number;
  file?: string;
  line: number;
}

export function parseSource(value: unknown): SourceSite | null {
  const text = typeof value === 'string' ? value : '';
  const cell = /^cell:([^#]*)#(\d*):(\d+)$/.exec(text);
  if (cell) {
    return { cell: cell[1], executionCount: cell[2] ? Number(cell[2]) : undefined, line: Number(cell[3]) };
  }
  const file = /^(.*):(\d+)$/.exec(text);
  return file ? { file: file[1], line: Number(file[2]) } : null;
}
