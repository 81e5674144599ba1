/**
 * The graph view's model: a GraphDef folded into name-scope groups (whitepaper §9.1).
 *
 * Pure functions, no DOM: the Board panel and the notebook widgets share them.
 *
 *   parseGraphDef     GraphDef JSON -> ops and edges (data and ^control inputs)
 *   buildHierarchy    name scopes -> a tree of groups ("a/b/c" lives in groups "a" and "a/b");
 *                     an op named like a scope goes into it; a scope with more than
 *                     MAX_CHILDREN ops is split into synthetic groups of consecutive names, so
 *                     no layout ever sees thousands of siblings
 *   groupSeries       sibling groups cell_0 … cell_99 of one structure -> one series cell_[0-99]
 *   extractBookkeeping  rules -> ops set aside as auxiliary (TensorBoard's "auxiliary nodes"):
 *                     initializers, savers, summaries, gradients, optimizer updates, high degree
 *   groupSignatures   groups of identical structure share a signature
 *   collapse          the expanded groups -> the visible graph (items, edges, parents); each
 *                     drawn edge keeps its kind (data, control, reference) and its tensors
 *   searchOps         ops whose name or type matches a query
 *   outputsOf         an op's outputs: dtype and shape, from `_output_types`/`_output_shapes`
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

export interface Group {
  path: string;
  parent: string;
  /** Direct child groups' paths. */
  groups: string[];
  /** Direct child ops' names. */
  ops: string[];
  /** Number of ops anywhere below. */
  size: number;
  /** True for a group that splits a scope with too many ops (not a name scope). */
  synthetic?: boolean;
  /** For a series group: how many members (groups of one structure, numbered). */
  series?: number;
}

/** Most children one group shows; larger scopes are split into synthetic groups. */
export const MAX_CHILDREN = 200;

const naturalOrder = (a: string, b: string): number =>
  a.localeCompare(b, undefined, { numeric: true });

/**
 * Every name scope as a group; the root group has path "". Sets each op's `group`. A scope
 * holding more than `maxChildren` ops keeps its first ones and moves the rest, in name order,
 * into synthetic groups "[first … last]" (nested again if there are very many).
 */
export function buildHierarchy(graph: Graph, maxChildren = MAX_CHILDREN): Map<string, Group> {
  const groups = new Map<string, Group>();
  const ensure = (path: string): Group => {
    let g = groups.get(path);
    if (!g) {
      const parent = scopeOf(path);
      g = { path, parent, groups: [], ops: [], size: 0 };
      groups.set(path, g);
      if (path !== '') {
        ensure(parent).groups.push(path);
      }
    }
    return g;
  };
  ensure('');
  for (const op of graph.ops.values()) {
    ensure(op.scope);
  }
  for (const op of graph.ops.values()) {
    // an op named like a scope (variable "W" beside "W/Assign", "W/read") lives in that
    // group, as TensorBoard draws it: never "W" and "⊞ W" side by side
    const home = groups.has(op.name) ? op.name : op.scope;
    groups.get(home)!.ops.push(op.name);
    op.group = home;
  }
  for (const g of [...groups.values()]) {
    if (g.ops.length + g.groups.length > maxChildren) {
      g.ops.sort(naturalOrder);
      g.ops = splitOps(graph, groups, g, g.ops, Math.max(2, maxChildren - g.groups.length), maxChildren);
    }
  }
  const count = (g: Group): number => {
    g.size = g.ops.length + g.groups.reduce((n, c) => n + count(groups.get(c)!), 0);
    return g.size;
  };
  count(groups.get('')!);
  return groups;
}

/** Fit `names` into at most `room` children of `parent`: returns the ops kept directly. */
function splitOps(
  graph: Graph,
  groups: Map<string, Group>,
  parent: Group,
  names: string[],
  room: number,
  maxChildren: number
): string[] {
  if (names.length <= room) {
    return names;
  }
  const chunk = Math.max(maxChildren, Math.ceil(names.length / room));
  for (let i = 0; i < names.length; i += chunk) {
    const part = names.slice(i, i + chunk);
    const label = `[${lastComponent(part[0])} … ${lastComponent(part[part.length - 1])}]`;
    const path = parent.path ? `${parent.path}/${label}` : label;
    const g: Group = { path, parent: parent.path, groups: [], ops: [], size: 0, synthetic: true };
    groups.set(path, g);
    parent.groups.push(path);
    g.ops = splitOps(graph, groups, g, part, maxChildren, maxChildren);
    for (const name of g.ops) {
      graph.ops.get(name)!.group = path;
    }
  }
  return [];
}

export interface BookkeepingRules {
  /** Ops with more than this many edges (in + out) are set aside; 0 disables. */
  maxDegree: number;
  /** Op types always set aside (e.g. "NoOp", "Assert"). */
  opTypes: string[];
  /** Regular expressions over op names (e.g. "^save/", "global_step"). */
  namePatterns: string[];
  /** Set aside training and checkpointing machinery (AUXILIARY_SCOPES, AUXILIARY_TYPES). */
  auxiliary: boolean;
}

/**
 * Top-level scopes that are machinery rather than model: gradients, optimizer updates, savers,
 * initializers and summaries. TensorBoard moves these into its "auxiliary nodes" area.
 */
export const AUXILIARY_SCOPES = [
  'gradients(_\\d+)?',
  'save(_\\d+)?',
  'init(_\\d+)?',
  'init_all_tables',
  'report_uninitialized_variables(_\\d+)?',
  'summaries',
  'train',
  '(Adagrad|Adam|Adadelta|Ftrl|GradientDescent|Momentum|RMSProp|ProximalAdagrad|ProximalGradientDescent)(_\\d+)?',
  'global_step',
  'beta1_power(_\\d+)?',
  'beta2_power(_\\d+)?'
];

/** Op types that are machinery wherever they are: summaries and no-op groupings. */
export const AUXILIARY_TYPES = [
  'ScalarSummary',
  'HistogramSummary',
  'ImageSummary',
  'AudioSummary',
  'TensorSummary',
  'TensorSummaryV2',
  'MergeSummary',
  'SaveV2',
  'RestoreV2',
  'MergeV2Checkpoints'
];

export const DEFAULT_BOOKKEEPING: BookkeepingRules = {
  maxDegree: 25,
  opTypes: [],
  namePatterns: [],
  auxiliary: true
};

export function normalizeRules(rules: Partial<BookkeepingRules> | undefined): BookkeepingRules {
  return {
    maxDegree: rules?.maxDegree ?? DEFAULT_BOOKKEEPING.maxDegree,
    opTypes: rules?.opTypes ?? DEFAULT_BOOKKEEPING.opTypes,
    namePatterns: rules?.namePatterns ?? DEFAULT_BOOKKEEPING.namePatterns,
    auxiliary: rules?.auxiliary ?? DEFAULT_BOOKKEEPING.auxiliary
  };
}

const AUXILIARY_SCOPE = new RegExp(`^(${AUXILIARY_SCOPES.join('|')})(/|$)`);

/**
 * The ops that the rules set aside as auxiliary. `keep` names ops and scopes the user put back
 * into the graph (toggled per node); everything at or below them stays.
 */
export function extractBookkeeping(
  graph: Graph,
  rules: BookkeepingRules,
  keep: ReadonlySet<string> = new Set()
): Set<string> {
  const degree = new Map<string, number>();
  for (const e of graph.edges) {
    degree.set(e.src, (degree.get(e.src) ?? 0) + 1);
    degree.set(e.dst, (degree.get(e.dst) ?? 0) + 1);
  }
  const patterns = rules.namePatterns.map(p => new RegExp(p));
  const types = new Set(rules.opTypes);
  const auxTypes = new Set(AUXILIARY_TYPES);
  const kept = (name: string): boolean => {
    if (!keep.size) {
      return false;
    }
    for (let p = name; p; p = scopeOf(p)) {
      if (keep.has(p)) {
        return true;
      }
    }
    return false;
  };
  const aside = new Set<string>();
  for (const op of graph.ops.values()) {
    if (kept(op.name)) {
      continue;
    }
    if (
      (rules.maxDegree > 0 && (degree.get(op.name) ?? 0) > rules.maxDegree) ||
      types.has(op.op) ||
      patterns.some(p => p.test(op.name)) ||
      (rules.auxiliary && (AUXILIARY_SCOPE.test(op.name) || auxTypes.has(op.op)))
    ) {
      aside.add(op.name);
    }
  }
  // constants that feed only auxiliary ops (a summary's tag, a saver's file name) go with them
  const consumers = new Map<string, string[]>();
  for (const e of graph.edges) {
    const list = consumers.get(e.src) ?? [];
    list.push(e.dst);
    consumers.set(e.src, list);
  }
  for (const op of graph.ops.values()) {
    const out = consumers.get(op.name) ?? [];
    if (op.op === 'Const' && !op.inputs.length && out.length && !aside.has(op.name) && !kept(op.name) && out.every(n => aside.has(n))) {
      aside.add(op.name);
    }
  }
  return aside;
}

/**
 * Where each aside op is listed: the outermost group holding only aside ops (so `gradients`
 * with its 60 ops is one entry, as in TensorBoard), or the op itself.
 */
export function asideHomes(graph: Graph, groups: Map<string, Group>, aside: ReadonlySet<string>): Map<string, string> {
  const all = new Map<string, boolean>();
  const allAside = (path: string): boolean => {
    let known = all.get(path);
    if (known === undefined) {
      const g = groups.get(path)!;
      known = g.ops.every(o => aside.has(o)) && g.groups.every(allAside);
      all.set(path, known);
    }
    return known;
  };
  const homes = new Map<string, string>();
  for (const name of aside) {
    const op = graph.ops.get(name);
    if (!op) {
      continue;
    }
    let home = name;
    for (let p = op.group; p !== ''; p = groups.get(p)?.parent ?? '') {
      if (!groups.get(p)?.synthetic && allAside(p)) {
        home = p;
      }
    }
    homes.set(name, home);
  }
  return homes;
}

/**
 * A structural signature per group: its op types, its child groups' signatures and its
 * internal edges by (source type, destination type), independent of names. Groups sharing a
 * signature (a repeated layer, a tower per GPU) are drawn alike.
 */
export function groupSignatures(graph: Graph, groups: Map<string, Group>): Map<string, string> {
  const signatures = new Map<string, string>();
  const internal = new Map<string, string[]>();
  for (const e of graph.edges) {
    const a = graph.ops.get(e.src)!;
    const b = graph.ops.get(e.dst)!;
    if (a.group === b.group) {
      const list = internal.get(a.group) ?? [];
      list.push(`${a.op}>${b.op}${e.control ? '^' : ''}`);
      internal.set(a.group, list);
    }
  }
  const visit = (path: string): string => {
    const known = signatures.get(path);
    if (known !== undefined) {
      return known;
    }
    const g = groups.get(path)!;
    const parts = [
      ...g.ops.map(n => graph.ops.get(n)!.op).sort(),
      '|',
      ...g.groups.map(visit).sort(),
      '|',
      ...(internal.get(path) ?? []).sort()
    ];
    const sig = hashString(parts.join(','));
    signatures.set(path, sig);
    return sig;
  };
  for (const path of groups.keys()) {
    visit(path);
  }
  return signatures;
}

/** Signatures shared by at least two groups of two or more ops, with their member count. */
export function repeatedSignatures(
  groups: Map<string, Group>,
  signatures: Map<string, string>
): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [path, g] of groups) {
    if (path !== '' && g.size >= 2) {
      const s = signatures.get(path)!;
      counts.set(s, (counts.get(s) ?? 0) + 1);
    }
  }
  for (const [s, n] of [...counts]) {
    if (n < 2) {
      counts.delete(s);
    }
  }
  return counts;
}

function hashString(s: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 16777619);
    h2 = Math.imul(h2 + c, 2246822519);
  }
  return (h1 >>> 0).toString(16) + (h2 >>> 0).toString(16);
}

/** Fewest alike siblings folded into a series (TensorBoard's seriesNodeMinSize). */
export const SERIES_MIN_MEMBERS = 5;

/**
 * Series: sibling groups named `name_0 … name_N` (or `name`, `name_1`, … ) that share one
 * structure are folded into one group `name_[0-N]`, as TensorBoard draws a 100-step RNN's cells
 * as one node. Members keep their paths; only their parent changes. Returns the series paths.
 */
export function groupSeries(
  graph: Graph,
  groups: Map<string, Group>,
  signatures: Map<string, string>,
  minMembers = SERIES_MIN_MEMBERS
): string[] {
  const made = groupOpSeries(graph, groups, minMembers);
  for (const parent of [...groups.values()]) {
    const buckets = new Map<string, { index: number; path: string }[]>();
    for (const child of parent.groups) {
      const g = groups.get(child)!;
      if (g.synthetic || g.series) {
        continue;
      }
      const m = /^(.*?)_?(\d+)$/.exec(lastComponent(child));
      const [base, index] = m ? [m[1], Number(m[2])] : [lastComponent(child), 0];
      const key = `${base}\u0000${signatures.get(child)}`;
      const list = buckets.get(key) ?? [];
      list.push({ index, path: child });
      buckets.set(key, list);
    }
    for (const [key, members] of buckets) {
      if (members.length < minMembers) {
        continue;
      }
      members.sort((a, b) => a.index - b.index);
      const base = key.slice(0, key.indexOf('\u0000'));
      const first = members[0];
      const separator = lastComponent(first.path) === base ? '_' : lastComponent(first.path).slice(base.length, -String(first.index).length) || '';
      const label = `${base}${separator}[${first.index}-${members[members.length - 1].index}]`;
      const path = parent.path ? `${parent.path}/${label}` : label;
      if (groups.has(path)) {
        continue;
      }
      const inSeries = new Set(members.map(x => x.path));
      const series: Group = {
        path,
        parent: parent.path,
        groups: members.map(x => x.path),
        ops: [],
        size: members.reduce((n, x) => n + groups.get(x.path)!.size, 0),
        synthetic: true,
        series: members.length
      };
      groups.set(path, series);
      for (const x of members) {
        groups.get(x.path)!.parent = path;
      }
      const at = parent.groups.findIndex(c => inSeries.has(c));
      parent.groups = parent.groups.filter(c => !inSeries.has(c));
      parent.groups.splice(at, 0, path);
      signatures.set(path, `series:${signatures.get(first.path)}`);
      made.push(path);
    }
  }
  return made;
}

/**
 * Ops of one type named `name_0 … name_N` (100 placeholders of an unrolled RNN) that feed none
 * of each other fold into a series group `name_[0-N]`; a chain `op0 → op1 → …` stays a chain.
 */
function groupOpSeries(graph: Graph, groups: Map<string, Group>, minMembers: number): string[] {
  const made: string[] = [];
  const consumers = new Map<string, string[]>();
  for (const e of graph.edges) {
    const list = consumers.get(e.src) ?? [];
    list.push(e.dst);
    consumers.set(e.src, list);
  }
  for (const parent of [...groups.values()]) {
    if (parent.synthetic) {
      continue;
    }
    const buckets = new Map<string, { index: number; name: string }[]>();
    for (const name of parent.ops) {
      const m = /^(.*?)_?(\d+)$/.exec(lastComponent(name));
      const [base, index] = m ? [m[1], Number(m[2])] : [lastComponent(name), 0];
      const key = `${base}\u0000${graph.ops.get(name)!.op}`;
      const list = buckets.get(key) ?? [];
      list.push({ index, name });
      buckets.set(key, list);
    }
    for (const [key, members] of buckets) {
      if (members.length < minMembers || groups.has(members[0].name)) {
        continue;
      }
      const names = new Set(members.map(x => x.name));
      const chained = members.some(x => (consumers.get(x.name) ?? []).some(d => names.has(d)));
      if (chained) {
        continue;
      }
      members.sort((a, b) => a.index - b.index);
      const base = key.slice(0, key.indexOf('\u0000'));
      const label = `${base}_[${members[0].index}-${members[members.length - 1].index}]`;
      const path = parent.path ? `${parent.path}/${label}` : label;
      if (groups.has(path)) {
        continue;
      }
      groups.set(path, {
        path,
        parent: parent.path,
        groups: [],
        ops: members.map(x => x.name),
        size: members.length,
        synthetic: true,
        series: members.length
      });
      parent.ops = parent.ops.filter(o => !names.has(o));
      parent.groups.push(path);
      for (const x of members) {
        graph.ops.get(x.name)!.group = path;
      }
      made.push(path);
    }
  }
  return made;
}

export type ItemKind = 'op' | 'group';

export interface VisibleItem {
  /** "op:<name>" or "group:<path>". */
  id: string;
  kind: ItemKind;
  /** Op name or group path. */
  name: string;
  /** Short label: last name component. */
  label: string;
  /** Id of the enclosing expanded group, "" at top level. */
  parent: string;
  expanded: boolean;
}

export interface VisibleEdge {
  src: string;
  dst: string;
  /** Number of op edges folded into this one. */
  count: number;
  /** True when every folded edge is a control edge. */
  control: boolean;
  /** 'ref' if any folded edge updates a variable, else 'data' if any carries a tensor. */
  kind: EdgeKind;
  /** The distinct tensors carried ("op:0"), in order of appearance. */
  tensors: string[];
}

/** One entry of the auxiliary area: an aside op, or a group whose ops are all aside. */
export interface AsideEntry {
  name: string;
  /** The op's type, or "group" for a group. */
  op: string;
  /** How many ops it stands for. */
  ops: number;
  /** How many edges it has to the drawn graph. */
  degree: number;
}

/** Small marks on a drawn node for its edges to the auxiliary area (TensorBoard's stubs). */
export interface Stubs {
  /** Auxiliary entries feeding the node. */
  in: string[];
  /** Auxiliary entries the node feeds. */
  out: string[];
}

export interface VisibleGraph {
  items: VisibleItem[];
  edges: VisibleEdge[];
  /** The auxiliary area: aside ops folded into their outermost all-aside group. */
  aside: AsideEntry[];
  /** Stubs by item id. */
  stubs: Map<string, Stubs>;
}

export const groupId = (path: string): string => `group:${path}`;
export const opId = (name: string): string => `op:${name}`;

function lastComponent(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/**
 * The graph as drawn: a collapsed group stands for all ops below it; an expanded group is a
 * cluster around its children. Edges between ops map to edges between their representatives;
 * parallel ones are merged and counted, and edges inside one representative disappear.
 */
export function collapse(
  graph: Graph,
  groups: Map<string, Group>,
  expanded: ReadonlySet<string>,
  aside: ReadonlySet<string> = new Set()
): VisibleGraph {
  const items: VisibleItem[] = [];
  const representative = new Map<string, string>();
  const walk = (path: string, parentId: string): void => {
    const g = groups.get(path)!;
    for (const child of g.groups) {
      const open = expanded.has(child);
      const id = groupId(child);
      const opsBelow = countVisibleOps(groups, child, aside);
      if (opsBelow === 0) {
        continue;
      }
      items.push({ id, kind: 'group', name: child, label: lastComponent(child), parent: parentId, expanded: open });
      if (open) {
        walk(child, id);
      } else {
        markRepresentative(groups, child, id, representative);
      }
    }
    for (const name of g.ops) {
      if (aside.has(name)) {
        continue;
      }
      const id = opId(name);
      items.push({ id, kind: 'op', name, label: lastComponent(name), parent: parentId, expanded: false });
      representative.set(name, id);
    }
  };
  walk('', '');
  const homes = asideHomes(graph, groups, aside);
  const merged = new Map<string, VisibleEdge>();
  const entries = new Map<string, AsideEntry>();
  for (const [name, home] of homes) {
    const entry = entries.get(home) ?? { name: home, op: groups.has(home) ? 'group' : graph.ops.get(name)!.op, ops: 0, degree: 0 };
    entry.ops += 1;
    entries.set(home, entry);
  }
  const stubs = new Map<string, Stubs>();
  const stub = (id: string, side: 'in' | 'out', home: string): void => {
    const s = stubs.get(id) ?? { in: [], out: [] };
    if (!s[side].includes(home)) {
      s[side].push(home);
    }
    stubs.set(id, s);
  };
  for (const e of graph.edges) {
    const srcHome = homes.get(e.src);
    const dstHome = homes.get(e.dst);
    if (srcHome !== undefined || dstHome !== undefined) {
      const a = representative.get(e.src);
      const b = representative.get(e.dst);
      if (srcHome !== undefined && b) {
        entries.get(srcHome)!.degree += 1;
        stub(b, 'in', srcHome);
      }
      if (dstHome !== undefined && a) {
        entries.get(dstHome)!.degree += 1;
        stub(a, 'out', dstHome);
      }
      continue;
    }
    const a = representative.get(e.src);
    const b = representative.get(e.dst);
    if (!a || !b || a === b) {
      continue;
    }
    const key = `${a}\u0000${b}`;
    const tensor = e.control ? '' : `${e.src}:${e.index}`;
    const m = merged.get(key);
    if (m) {
      m.count += 1;
      m.control = m.control && e.control;
      m.kind = m.kind === 'ref' || e.kind === 'ref' ? 'ref' : m.kind === 'data' || e.kind === 'data' ? 'data' : 'control';
      if (tensor && !m.tensors.includes(tensor)) {
        m.tensors.push(tensor);
      }
    } else {
      merged.set(key, { src: a, dst: b, count: 1, control: e.control, kind: e.kind, tensors: tensor ? [tensor] : [] });
    }
  }
  const asideList = [...entries.values()].sort((x, y) => x.name.localeCompare(y.name));
  return { items, edges: [...merged.values()], aside: asideList, stubs };
}

function countVisibleOps(groups: Map<string, Group>, path: string, aside: ReadonlySet<string>): number {
  if (aside.size === 0) {
    return groups.get(path)!.size;
  }
  const g = groups.get(path)!;
  let n = g.ops.filter(o => !aside.has(o)).length;
  for (const c of g.groups) {
    n += countVisibleOps(groups, c, aside);
  }
  return n;
}

function markRepresentative(
  groups: Map<string, Group>,
  path: string,
  id: string,
  representative: Map<string, string>
): void {
  const g = groups.get(path)!;
  for (const op of g.ops) {
    representative.set(op, id);
  }
  for (const c of g.groups) {
    markRepresentative(groups, c, id, representative);
  }
}

/** Groups to expand so that an op becomes visible: its enclosing groups, outermost first. */
export function groupsAround(graph: Graph, groups: Map<string, Group>, name: string): string[] {
  const out: string[] = [];
  const op = graph.ops.get(name);
  for (let p = op ? op.group : scopeOf(name); p !== ''; p = groups.get(p)?.parent ?? '') {
    out.unshift(p);
  }
  return out;
}

/** Ops whose name or op type contains the query (case-insensitive), at most `limit`. */
export function searchOps(graph: Graph, query: string, limit = 50): OpNode[] {
  const q = query.trim().toLowerCase();
  if (!q) {
    return [];
  }
  const out: OpNode[] = [];
  for (const op of graph.ops.values()) {
    if (op.name.toLowerCase().includes(q) || op.op.toLowerCase().includes(q)) {
      out.push(op);
      if (out.length >= limit) {
        break;
      }
    }
  }
  return out;
}

/** The devices used below a group (or by an op), most frequent first. */
export function devicesBelow(graph: Graph, groups: Map<string, Group>, item: VisibleItem): string[] {
  const counts = new Map<string, number>();
  const add = (op: string): void => {
    const d = graph.ops.get(op)!.device;
    counts.set(d, (counts.get(d) ?? 0) + 1);
  };
  if (item.kind === 'op') {
    add(item.name);
  } else {
    const visit = (p: string): void => {
      const g = groups.get(p)!;
      g.ops.forEach(add);
      g.groups.forEach(visit);
    };
    visit(item.name);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1]).map(e => e[0]);
}

/**
 * The sum of a per-op figure over the ops an item stands for: compute time (µs) from a trace's
 * durations, or memory (bytes) from its allocation figures.
 */
export function computeTimeOf(
  groups: Map<string, Group>,
  item: VisibleItem,
  opTimes: ReadonlyMap<string, number>
): number {
  if (item.kind === 'op') {
    return opTimes.get(item.name) ?? 0;
  }
  let total = 0;
  const visit = (p: string): void => {
    const g = groups.get(p)!;
    for (const o of g.ops) {
      total += opTimes.get(o) ?? 0;
    }
    g.groups.forEach(visit);
  };
  visit(item.name);
  return total;
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

/** What an edge carries, for its hover label: "MatMul:0 float32[?,10]", one line per tensor. */
export function edgeLabel(graph: Graph, edge: VisibleEdge, limit = 6): string {
  if (!edge.tensors.length) {
    return `control dependency${edge.count > 1 ? ` (${edge.count})` : ''}`;
  }
  const lines = edge.tensors.slice(0, limit).map(t => {
    const info = tensorInfo(graph, t);
    return info ? `${t} ${formatTensor(info)}` : t;
  });
  if (edge.tensors.length > limit) {
    lines.push(`… ${edge.tensors.length - limit} more`);
  }
  if (edge.kind === 'ref') {
    lines.unshift('reference (variable update)');
  }
  return lines.join('\n');
}

/** Elements carried by an edge, over its distinct tensors (for a size-weighted stroke). */
export function edgeElements(graph: Graph, edge: VisibleEdge): number {
  let n = 0;
  for (const t of edge.tensors) {
    const info = tensorInfo(graph, t);
    n += info ? elementCount(info) : 1;
  }
  return n;
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
