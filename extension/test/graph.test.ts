import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { extractBookkeeping, normalizeRules } from '../src/model/auxiliary';
import {
  buildHierarchy,
  collapse,
  computeTimeOf,
  edgeElements,
  edgeLabel,
  groupsAround,
  MAX_CHILDREN,
  searchOps
} from '../src/model/graph';
import {
  diffGraphs,
  formatTensor,
  outputsOf,
  parseGraphDef,
  parseInput,
  parseSource,
  strokeWidthFor
} from '../src/model/graphDef';
import { groupSeries, groupSignatures, repeatedSignatures } from '../src/model/graphSeries';
import { opBytes } from '../src/model/trace';
import { computeLayout } from '../src/model/layout';
import { LIGHT_TEXT, DARK_TEXT, contrastRatio, textColorOn, tint } from '../src/model/color';

const def = {
  node: [
    { name: 'x', op: 'Placeholder' },
    { name: 'layer1/w', op: 'VariableV2', device: '/cpu:0' },
    { name: 'layer1/matmul', op: 'MatMul', input: ['x', 'layer1/w'], device: '/cpu:0' },
    { name: 'layer1/relu', op: 'Relu', input: ['layer1/matmul'], device: '/cpu:0' },
    { name: 'layer2/w', op: 'VariableV2', device: '/gpu:0' },
    { name: 'layer2/matmul', op: 'MatMul', input: ['layer1/relu', 'layer2/w'], device: '/gpu:0' },
    { name: 'layer2/relu', op: 'Relu', input: ['layer2/matmul'], device: '/gpu:0' },
    { name: 'loss', op: 'Mean', input: ['layer2/relu:0', '^init'] },
    { name: 'init', op: 'NoOp' }
  ]
};

test('parse_input_reads_control_and_output_index', () => {
  assert.deepEqual(parseInput('^init'), { name: 'init', index: -1, control: true });
  assert.deepEqual(parseInput('a/b:2'), { name: 'a/b', index: 2, control: false });
  assert.deepEqual(parseInput('a/b'), { name: 'a/b', index: 0, control: false });
});

test('collapsed_scopes_become_groups_with_merged_edges', () => {
  const graph = parseGraphDef(def);
  const groups = buildHierarchy(graph);
  assert.equal(groups.get('')!.size, 9);
  assert.deepEqual(groups.get('')!.groups.sort(), ['layer1', 'layer2']);
  const v = collapse(graph, groups, new Set());
  assert.deepEqual(v.items.map(i => i.id).sort(), ['group:layer1', 'group:layer2', 'op:init', 'op:loss', 'op:x']);
  const edges = v.edges.map(e => `${e.src}->${e.dst}${e.control ? '^' : ''}`).sort();
  assert.deepEqual(edges, ['group:layer1->group:layer2', 'group:layer2->op:loss', 'op:init->op:loss^', 'op:x->group:layer1']);
});

test('expanding_a_group_reveals_its_ops_inside_a_cluster', () => {
  const graph = parseGraphDef(def);
  const groups = buildHierarchy(graph);
  const v = collapse(graph, groups, new Set(['layer1']));
  const inside = v.items.filter(i => i.parent === 'group:layer1').map(i => i.name).sort();
  assert.deepEqual(inside, ['layer1/matmul', 'layer1/relu', 'layer1/w']);
  assert.ok(v.items.find(i => i.id === 'group:layer1')!.expanded);
  assert.ok(v.edges.some(e => e.src === 'op:layer1/relu' && e.dst === 'group:layer2'));
  assert.ok(v.edges.some(e => e.src === 'op:x' && e.dst === 'op:layer1/matmul'));
});

test('groups_of_identical_structure_share_a_signature', () => {
  const graph = parseGraphDef(def);
  const groups = buildHierarchy(graph);
  const sigs = groupSignatures(graph, groups);
  assert.equal(sigs.get('layer1'), sigs.get('layer2'));
  assert.notEqual(sigs.get('layer1'), sigs.get(''));
  assert.equal(repeatedSignatures(groups, sigs).get(sigs.get('layer1')!), 2);
});

test('bookkeeping_rules_set_aside_high_degree_types_and_names', () => {
  const hub = { node: [{ name: 'step', op: 'VariableV2' }, ...Array.from({ length: 30 }, (_, i) => ({ name: `s${i}/op`, op: 'Add', input: ['step'] }))] };
  const graph = parseGraphDef(hub);
  const groups = buildHierarchy(graph);
  const aside = extractBookkeeping(graph, normalizeRules({ maxDegree: 10 }));
  assert.deepEqual([...aside], ['step']);
  const v = collapse(graph, groups, new Set(), aside);
  assert.equal(v.edges.length, 0);
  assert.deepEqual(v.aside, [{ name: 'step', op: 'VariableV2', ops: 1, degree: 30 }]);
  assert.equal(v.stubs.get('group:s3')!.in[0], 'step'); // a stub on each node it touches
  assert.equal(extractBookkeeping(graph, normalizeRules({ maxDegree: 0 })).size, 0);
  assert.deepEqual([...extractBookkeeping(graph, normalizeRules({ maxDegree: 0, opTypes: ['VariableV2'] }))], ['step']);
  assert.equal(extractBookkeeping(graph, normalizeRules({ maxDegree: 0, namePatterns: ['^s1'] })).size, 11);
});

test('search_and_scopes_find_an_op_and_the_groups_to_expand', () => {
  const graph = parseGraphDef(def);
  assert.deepEqual(searchOps(graph, 'relu').map(o => o.name), ['layer1/relu', 'layer2/relu']);
  const nested = parseGraphDef({ node: [{ name: 'a/b/c', op: 'Add' }] });
  assert.deepEqual(groupsAround(nested, buildHierarchy(nested), 'a/b/c'), ['a', 'a/b']);
});

test('compute_time_of_a_group_sums_its_ops', () => {
  const graph = parseGraphDef(def);
  const groups = buildHierarchy(graph);
  const times = new Map([['layer1/matmul', 10], ['layer1/relu', 5], ['x', 1]]);
  const item = { id: 'group:layer1', kind: 'group' as const, name: 'layer1', label: 'layer1', parent: '', expanded: false };
  assert.equal(computeTimeOf(groups, item, times), 15);
});

test('collapsing_ten_thousand_ops_is_fast', () => {
  const node = [];
  for (let b = 0; b < 100; b++) {
    for (let i = 0; i < 100; i++) {
      node.push({ name: `block${b}/op${i}`, op: 'Add', input: i ? [`block${b}/op${i - 1}`] : b ? [`block${b - 1}/op99`] : [] });
    }
  }
  const t0 = Date.now();
  const graph = parseGraphDef({ node });
  const groups = buildHierarchy(graph);
  const sigs = groupSignatures(graph, groups);
  const v = collapse(graph, groups, new Set(['block3']));
  assert.equal(v.items.length, 100 + 100);
  assert.deepEqual([...repeatedSignatures(groups, sigs).values()], [100]); // all blocks alike
  assert.ok(Date.now() - t0 < 2000, `took ${Date.now() - t0} ms`);
});

test('layout_places_clusters_around_their_children', () => {
  const result = computeLayout({
    id: 1,
    nodes: [
      { id: 'g', width: 0, height: 0, parent: '', cluster: true },
      { id: 'a', width: 50, height: 20, parent: 'g', cluster: false },
      { id: 'b', width: 50, height: 20, parent: 'g', cluster: false },
      { id: 'c', width: 50, height: 20, parent: '', cluster: false }
    ],
    edges: [{ src: 'a', dst: 'b' }, { src: 'b', dst: 'c' }]
  });
  const g = result.boxes['g'];
  for (const id of ['a', 'b']) {
    const n = result.boxes[id];
    assert.ok(n.x - n.width / 2 >= g.x - g.width / 2 && n.y + n.height / 2 <= g.y + g.height / 2, id);
  }
  assert.ok(result.boxes['a'].y < result.boxes['b'].y && result.boxes['b'].y < result.boxes['c'].y);
  assert.equal(result.edges.length, 2);
  // an edge leaving the group starts at its op's bottom and ends at the other op's top
  const out = result.edges.find(e => e.src === 'b')!.points;
  const [b, c] = [result.boxes['b'], result.boxes['c']];
  assert.deepEqual(out[0], { x: b.x, y: b.y + b.height / 2 });
  assert.ok(Math.abs(out[out.length - 1].y - (c.y - c.height / 2)) <= 1);
});

test('a_flat_scope_of_ten_thousand_ops_is_split_and_lays_out', () => {
  const node = Array.from({ length: 10000 }, (_, i) => ({ name: `big/op${i}`, op: 'Add', input: i ? [`big/op${i - 1}`] : [] }));
  const graph = parseGraphDef({ node });
  const groups = buildHierarchy(graph);
  const big = groups.get('big')!;
  assert.equal(big.size, 10000);
  assert.ok(big.groups.length <= MAX_CHILDREN && big.ops.length === 0);
  assert.ok(big.groups.every(p => groups.get(p)!.synthetic && groups.get(p)!.ops.length <= MAX_CHILDREN));
  assert.equal(big.groups[0], 'big/[op0 … op199]', 'natural name order');
  const around = groupsAround(graph, groups, 'big/op4321');
  assert.deepEqual(around, ['big', 'big/[op4200 … op4399]']);
  const v = collapse(graph, groups, new Set(around));
  assert.ok(v.items.length <= 2 * MAX_CHILDREN + 1);
  assert.ok(v.items.some(i => i.id === 'op:big/op4321'));
  const t0 = Date.now();
  const result = computeLayout({
    id: 2,
    nodes: v.items.map(i => ({ id: i.id, width: 60, height: 26, parent: i.parent, cluster: i.expanded })),
    edges: v.edges
  });
  assert.ok(result.boxes['op:big/op4321'], 'laid out without overflowing the stack');
  assert.ok(Date.now() - t0 < 15000, `layout took ${Date.now() - t0} ms`);
});

/** A training graph as tf.train writes it: model, gradients, optimizer, init and save. */
const training = {
  node: [
    { name: 'x', op: 'Placeholder' },
    { name: 'W', op: 'VariableV2' },
    { name: 'W/Assign', op: 'Assign', input: ['W', 'W/Initializer/zeros'] },
    { name: 'W/Initializer/zeros', op: 'Const' },
    { name: 'W/read', op: 'Identity', input: ['W'] },
    { name: 'MatMul', op: 'MatMul', input: ['x', 'W/read'] },
    { name: 'loss', op: 'Mean', input: ['MatMul'] },
    { name: 'gradients/Shape', op: 'Shape', input: ['loss'] },
    { name: 'gradients/MatMul_grad/MatMul', op: 'MatMul', input: ['gradients/Shape', 'x'] },
    { name: 'Adagrad/update_W/ApplyAdagrad', op: 'ApplyAdagrad', input: ['W', 'gradients/MatMul_grad/MatMul'] },
    { name: 'Adagrad', op: 'NoOp', input: ['^Adagrad/update_W/ApplyAdagrad'] },
    { name: 'init', op: 'NoOp', input: ['^W/Assign'] },
    { name: 'save/SaveV2', op: 'SaveV2', input: ['W'] },
    { name: 'loss_summary/tag', op: 'Const' },
    { name: 'loss_summary', op: 'ScalarSummary', input: ['loss_summary/tag', 'loss'] }
  ]
};

test('auxiliary_nodes_are_set_aside_by_default_as_whole_scopes_with_stubs', () => {
  const graph = parseGraphDef(training);
  const groups = buildHierarchy(graph);
  const aside = extractBookkeeping(graph, normalizeRules({}));
  const v = collapse(graph, groups, new Set(), aside);
  assert.deepEqual(v.aside.map(a => `${a.name}:${a.op}:${a.ops}`), [
    'Adagrad:group:2', 'gradients:group:2', 'init:NoOp:1', 'loss_summary:group:2', 'save:group:1'
  ]);
  assert.deepEqual(v.items.map(i => i.id).sort(), ['group:W', 'op:MatMul', 'op:loss', 'op:x']);
  assert.deepEqual(v.stubs.get('group:W'), { in: [], out: ['Adagrad', 'init', 'save'] });
  assert.deepEqual(v.stubs.get('op:loss')!.out.sort(), ['gradients', 'loss_summary']);
  // put back per node: the gradients scope returns to the graph
  const back = extractBookkeeping(graph, normalizeRules({}), new Set(['gradients']));
  assert.ok(collapse(graph, groups, new Set(), back).items.some(i => i.id === 'group:gradients'));
  assert.equal(extractBookkeeping(graph, normalizeRules({ auxiliary: false, maxDegree: 0 })).size, 0);
});

test('an_op_named_like_a_scope_lives_in_that_group', () => {
  const graph = parseGraphDef(training);
  const groups = buildHierarchy(graph);
  assert.deepEqual(groups.get('W')!.ops.sort(), ['W', 'W/Assign', 'W/read']);
  assert.equal(graph.ops.get('W')!.group, 'W');
  const v = collapse(graph, groups, new Set());
  assert.equal(v.items.filter(i => i.label === 'W').length, 1); // no "W" beside "⊞ W"
  assert.deepEqual(groupsAround(graph, groups, 'W'), ['W']);
});

test('repeated_cells_fold_into_one_series_node', () => {
  const node = [{ name: 'x', op: 'Placeholder' }];
  let prev = 'x';
  for (let i = 0; i < 100; i++) {
    const cell = `rnn/cell_${i}`;
    node.push({ name: `${cell}/mul`, op: 'Mul', input: [prev] } as never);
    node.push({ name: `${cell}/tanh`, op: 'Tanh', input: [`${cell}/mul`] } as never);
    prev = `${cell}/tanh`;
  }
  node.push({ name: 'rnn/other', op: 'Identity', input: [prev] } as never);
  const graph = parseGraphDef({ node });
  const groups = buildHierarchy(graph);
  const sigs = groupSignatures(graph, groups);
  assert.deepEqual(groupSeries(graph, groups, sigs), ['rnn/cell_[0-99]']);
  const series = groups.get('rnn/cell_[0-99]')!;
  assert.equal(series.series, 100);
  assert.equal(series.size, 200);
  assert.deepEqual(groups.get('rnn')!.groups, ['rnn/cell_[0-99]']);
  const v = collapse(graph, groups, new Set(['rnn']));
  assert.deepEqual(v.items.filter(i => i.parent === 'group:rnn').map(i => i.label).sort(), ['cell_[0-99]', 'other']);
  assert.deepEqual(groupsAround(graph, groups, 'rnn/cell_42/mul'), ['rnn', 'rnn/cell_[0-99]', 'rnn/cell_42']);
  // two alike layers are no series (TensorBoard needs more than two), different ones never
  const two = parseGraphDef(def);
  const twoGroups = buildHierarchy(two);
  assert.deepEqual(groupSeries(two, twoGroups, groupSignatures(two, twoGroups)), []);
});

test('node_labels_reach_a_contrast_of_4_5_on_every_fill', () => {
  assert.equal(contrastRatio('#000000', '#ffffff').toFixed(0), '21');
  assert.equal(contrastRatio('#777777', '#ffffff').toFixed(2), '4.48');
  // the palette's dark brown with dark text was the complaint: the label turns white
  assert.equal(textColorOn('#8c564b'), LIGHT_TEXT);
  assert.equal(textColorOn(tint('#8c564b', 0.6)), DARK_TEXT);
  const fills = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', 'rgb(175,45,35)', '#c9d7ef', '#fff'];
  for (const fill of fills) {
    for (const f of [fill, tint(fill, 0.6)]) {
      assert.ok(contrastRatio(textColorOn(f), f) >= 4.5, `${f}: ${contrastRatio(textColorOn(f), f)}`);
    }
  }
});

test('parallel_ops_of_one_type_fold_into_a_series_but_a_chain_does_not', () => {
  const node = [
    ...Array.from({ length: 5 }, (_, i) => ({ name: `x_${i}`, op: 'Placeholder' })),
    ...Array.from({ length: 5 }, (_, i) => ({ name: `chain/op${i}`, op: 'Add', input: i ? [`chain/op${i - 1}`] : [] })),
    { name: 'sum', op: 'AddN', input: ['x_0', 'x_1', 'x_2', 'x_3', 'x_4'] }
  ];
  const graph = parseGraphDef({ node });
  const groups = buildHierarchy(graph);
  assert.deepEqual(groupSeries(graph, groups, groupSignatures(graph, groups)), ['x_[0-4]']);
  assert.equal(graph.ops.get('x_3')!.group, 'x_[0-4]');
  const v = collapse(graph, groups, new Set());
  assert.deepEqual(v.items.map(i => i.id).sort(), ['group:chain', 'group:x_[0-4]', 'op:sum']);
  assert.deepEqual(v.edges.map(e => `${e.src}->${e.dst}:${e.count}`), ['group:x_[0-4]->op:sum:5']);
});


const trained = {
  node: [
    { name: 'x', op: 'Placeholder', attr: { dtype: { type: 'float32' }, _output_shapes: { list: [{ shape: [null, 784] }] } } },
    { name: 'w', op: 'VariableV2', attr: { dtype: { type: 'float32' }, _output_shapes: { list: [{ shape: [784, 10] }] } } },
    { name: 'w/read', op: 'Identity', input: ['w'], attr: { _output_shapes: { list: [{ shape: [784, 10] }] }, _output_types: { list: [{ type: 'float32' }] } } },
    { name: 'logits', op: 'MatMul', input: ['x', 'w/read'], attr: { _output_shapes: { list: [{ shape: [null, 10] }] }, _output_types: { list: [{ type: 'float32' }] }, _source: 'cell:c1#3:2' } },
    { name: 'pair', op: 'Split', input: ['logits'], attr: { _output_shapes: { list: [{ shape: [null, 5] }, { shape: [null, 5] }] }, _output_types: { list: [{ type: 'float32' }, { type: 'float32' }] } } },
    { name: 'same', op: 'Equal', input: ['pair', 'pair:1'], attr: { _output_shapes: { list: [{ shape: null }] }, _output_types: { list: [{ type: 'bool' }] } } },
    { name: 'w/init', op: 'Const' },
    { name: 'w/Assign', op: 'Assign', input: ['w', 'w/init'] },
    { name: 'train/update_w', op: 'ApplyGradientDescent', input: ['w', 'logits'] },
    { name: 'train', op: 'NoOp', input: ['^train/update_w'] }
  ]
};

test('edges_are_data_control_or_reference_into_a_variable_update', () => {
  const g = parseGraphDef(trained);
  const kind = (src: string, dst: string): string => g.edges.find(e => e.src === src && e.dst === dst)!.kind;
  assert.equal(kind('x', 'logits'), 'data');
  assert.equal(kind('w', 'w/read'), 'data'); // reading a variable is no update
  assert.equal(kind('w', 'w/Assign'), 'ref');
  assert.equal(kind('w/init', 'w/Assign'), 'data'); // the new value is an ordinary tensor
  assert.equal(kind('w', 'train/update_w'), 'ref');
  assert.equal(kind('train/update_w', 'train'), 'control');
});

test('collapsed_edges_keep_their_kind_and_tensors', () => {
  const g = parseGraphDef(trained);
  const groups = buildHierarchy(g);
  const v = collapse(g, groups, new Set());
  const edge = (src: string, dst: string) => v.edges.find(e => e.src === src && e.dst === dst)!;
  // w (a group holding w, w/read, w/Assign, w/init) into train: a reference beats data
  assert.equal(edge('group:w', 'group:train').kind, 'ref');
  assert.equal(edge('op:pair', 'op:same').kind, 'data');
  assert.deepEqual(edge('op:pair', 'op:same').tensors, ['pair:0', 'pair:1']);
  const inner = collapse(g, groups, new Set(['train']));
  assert.equal(inner.edges.find(e => e.src === 'op:train/update_w' && e.dst === 'op:train')!.kind, 'control');
});

test('outputs_read_dtype_and_shape_from_the_graph_def', () => {
  const g = parseGraphDef(trained);
  assert.deepEqual(outputsOf(g.ops.get('x')!), [{ dtype: 'float32', shape: [null, 784] }]);
  assert.deepEqual(outputsOf(g.ops.get('pair')!).map(formatTensor), ['float32[?,5]', 'float32[?,5]']);
  assert.equal(formatTensor(outputsOf(g.ops.get('same')!)[0]), 'bool[…]');
  assert.deepEqual(outputsOf(g.ops.get('w/init')!), []); // nothing recorded: nothing claimed
});

test('edge_labels_name_each_tensor_with_dtype_and_shape_and_width_grows_with_size', () => {
  const g = parseGraphDef(trained);
  const v = collapse(g, buildHierarchy(g), new Set(['w']));
  const label = (src: string, dst: string): string => edgeLabel(g, v.edges.find(e => e.src === src && e.dst === dst)!);
  assert.equal(label('op:x', 'op:logits'), 'x:0 float32[?,784]');
  assert.equal(label('op:pair', 'op:same'), 'pair:0 float32[?,5]\npair:1 float32[?,5]');
  assert.match(label('op:w', 'group:train'), /^reference \(variable update\)\nw:0 float32\[784,10\]$/);
  const size = (src: string, dst: string): number => edgeElements(g, v.edges.find(e => e.src === src && e.dst === dst)!);
  assert.equal(size('op:w/read', 'op:logits'), 7840);
  assert.equal(size('op:x', 'op:logits'), 784); // an unknown batch dimension counts as 1
  assert.equal(strokeWidthFor(1), 1);
  assert.ok(strokeWidthFor(784) < strokeWidthFor(7840));
  assert.equal(strokeWidthFor(1e12), 6);
});

test('graph_diff_finds_added_removed_and_changed_ops', () => {
  const before = parseGraphDef(trained);
  const nodes = trained.node
    .filter(n => n.name !== 'same')
    .map(n => (n.name === 'logits' ? { ...n, input: ['x', 'w'] } : n.name === 'x' ? { ...n, attr: { ...n.attr, _source: 'cell:c1#4:1' } } : n));
  nodes.push({ name: 'softmax', op: 'Softmax', input: ['logits'] } as (typeof nodes)[number]);
  const diff = diffGraphs(before, parseGraphDef({ node: nodes }));
  assert.deepEqual(diff, { added: ['softmax'], removed: ['same'], changed: ['logits'] }); // a moved line is no change
  assert.deepEqual(diffGraphs(before, parseGraphDef(trained)), { added: [], removed: [], changed: [] });
});

test('creation_sites_name_a_cell_or_a_file', () => {
  assert.deepEqual(parseSource('cell:c1#3:2'), { cell: 'c1', executionCount: 3, line: 2 });
  assert.deepEqual(parseSource('cell:c1#:2'), { cell: 'c1', executionCount: undefined, line: 2 });
  assert.deepEqual(parseSource('/home/me/train.py:41'), { file: '/home/me/train.py', line: 41 });
  assert.equal(parseSource(undefined), null);
});

test('memory_per_op_comes_from_the_traces_allocation_figures', () => {
  const trace = {
    traceEvents: [
      { ph: 'X', name: 'MatMul', ts: 0, dur: 5, args: { name: 'logits', op: 'MatMul', output0: 'float32[32, 10] (1280 B)' } },
      { ph: 'X', name: 'Split', ts: 5, dur: 1, args: { name: 'pair', output0: 'float32[32, 5] (640 B)', output1: 'float32[32, 5] (640 B)' } },
      { ph: 'X', name: 'NoOp', ts: 6, dur: 1, args: { name: 'train' } },
      { ph: 'C', name: 'Allocated bytes', ts: 6, args: { bytes: 2560 } }
    ]
  };
  assert.deepEqual([...opBytes(trace)], [['logits', 1280], ['pair', 1280]]);
  assert.equal(opBytes({ traceEvents: [{ ph: 'X', name: 'A', ts: 0, dur: 1, args: { name: 'a' } }] }).size, 0);
});
