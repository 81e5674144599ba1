/**
 * Auxiliary nodes, as TensorBoard calls them: the machinery of training (initializers, savers,
 * summaries, gradients, optimizer updates) and ops with very many edges, set aside from the
 * drawn graph into a side area so that the model reads as a clean column. Each drawn node keeps
 * a small stub per edge to the aside ops it touches (see collapse in model/graph.ts).
 *
 *   extractBookkeeping  rules -> the ops set aside (whole scopes such as `gradients` and `save`,
 *                       op types such as summaries, and high-degree ops), less those the user
 *                       brought back into the graph
 *   asideHomes          each aside op -> the entry that lists it: the outermost scope whose
 *                       ops are all aside, else the op itself
 *
 * Rules are data (BookkeepingRules), so the notebook and the Board can set them alike.
 */
import { Graph, scopeOf } from './graphDef';
import type { Group } from './graph';

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
