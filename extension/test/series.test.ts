import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { BASIS_POINTS, percentiles, rebin } from '../src/model/histogram';
import {
  appendReply,
  downsampleMinMax,
  emptySeries,
  filterTags,
  relativeLogdir,
  runLabel,
  smooth,
  ticks,
  toCsv,
  xValues
} from '../src/model/series';
import { buildTimeline, opTimes } from '../src/model/trace';

const reply = (offset: number, steps: number[], values: (number | null)[]) => ({
  run: 'train', tag: 'loss', offset, next_offset: offset + steps.length, total: offset + steps.length,
  downsampled: false, steps, wall_times: steps.map(s => 100 + s), values
});

test('incremental_replies_append_and_out_of_order_ones_are_ignored', () => {
  let s = emptySeries('train', 'loss');
  s = appendReply(s, reply(0, [0, 1], [1, 2]));
  s = appendReply(s, reply(2, [2], [3]));
  s = appendReply(s, reply(1, [9], [9]));
  assert.deepEqual(s.steps, [0, 1, 2]);
  assert.equal(s.nextOffset, 3);
  assert.deepEqual(xValues(s, 'relative'), [0, 1, 2]);
  assert.deepEqual(xValues(s, 'wall'), [100, 101, 102]);
  const restarted = appendReply(s, reply(0, [0], [5]));
  assert.deepEqual(restarted.steps, [0], 'a reply from offset 0 starts the series over');
});

test('smoothing_is_a_debiased_moving_average_that_keeps_gaps', () => {
  assert.deepEqual(smooth([1, 2, 3], 0), [1, 2, 3]);
  const s = smooth([2, 2, null, 2], 0.9);
  assert.ok(Math.abs((s[0] as number) - 2) < 1e-9, 'no pull towards zero');
  assert.equal(s[2], null);
  assert.ok(Math.abs((s[3] as number) - 2) < 1e-9);
  const step = smooth([0, 0, 0, 10, 10], 0.5) as number[];
  assert.ok(step[3] > 0 && step[3] < 10 && step[4] > step[3]);
});

test('downsampling_keeps_extremes_and_ends', () => {
  const xs = Array.from({ length: 1000 }, (_, i) => i);
  const ys = xs.map(i => (i === 437 ? 100 : i === 612 ? -100 : Math.sin(i / 50)));
  const keep = downsampleMinMax(xs, ys, 40);
  assert.ok(keep.length <= 40);
  for (const i of [0, 437, 612, 999]) {
    assert.ok(keep.includes(i), `index ${i} kept`);
  }
  assert.deepEqual(downsampleMinMax([0, 1, 2], [1, 2, 3], 10), [0, 1, 2]);
});

test('csv_and_tag_filter', () => {
  let s = emptySeries('run,1', 'loss');
  s = appendReply(s, reply(0, [0, 1], [0.5, null]));
  assert.equal(toCsv([s]), 'run,tag,step,wall_time,value\n"run,1",loss,0,100,0.5\n"run,1",loss,1,101,nan\n');
  assert.deepEqual(filterTags(['loss', 'accuracy', 'lr'], '^l'), ['loss', 'lr']);
  assert.deepEqual(filterTags(['a(b', 'c'], 'a('), ['a(b']);
});

test('ticks_are_round_numbers', () => {
  assert.deepEqual(ticks({ min: 0, max: 1 }, 5), [0, 0.2, 0.4, 0.6, 0.8, 1]);
});

test('absolute_logdirs_inside_the_root_become_relative', () => {
  assert.equal(relativeLogdir('/srv/work/logs/run1', '/srv/work'), 'logs/run1');
  assert.equal(relativeLogdir('/srv/work/', '/srv/work'), '.');
  assert.equal(relativeLogdir('/elsewhere', '/srv/work'), null);
  assert.equal(relativeLogdir('./logs', '/srv/work'), 'logs');
  assert.equal(relativeLogdir('', '/srv/work'), '.');
  assert.equal(relativeLogdir('/srv/work/logs', ''), null, 'unknown root: ask the server');
});

test('histogram_percentiles_and_rebinning', () => {
  const h = { min: 0, max: 10, num: 10, sum: 50, sum_squares: 0, bucket_limit: [5, 10], bucket: [5, 5] };
  const p = percentiles(h, BASIS_POINTS);
  assert.equal(p[0], 0);
  assert.equal(p[4], 5);
  assert.equal(p[8], 10);
  assert.deepEqual(rebin(h, 0, 10, 2), [5, 5]);
  const constant = { min: 0.1, max: 0.1, num: 4, sum: 0.4, sum_squares: 0.04, bucket_limit: [0.09, 0.11, 1e308], bucket: [0, 4, 0] };
  assert.deepEqual(rebin(constant, 0, 0.2, 4), [0, 0, 4, 0]);
  assert.deepEqual(percentiles(constant, [0, 5000, 10000]), [0.1, 0.1, 0.1]);
});

test('trace_rows_per_device_and_thread_with_op_times', () => {
  const trace = {
    traceEvents: [
      { ph: 'M', name: 'process_name', pid: 0, args: { name: '/cpu:0 Compute' } },
      { ph: 'X', name: 'MatMul', pid: 0, tid: 1, ts: 10, dur: 5, args: { name: 'layer1/matmul', op: 'MatMul' } },
      { ph: 'X', name: 'Relu', pid: 0, tid: 2, ts: 16, dur: 2, args: { name: 'layer1/relu', op: 'Relu' } },
      { ph: 'X', name: 'MatMul', pid: 0, tid: 1, ts: 20, dur: 3, args: { name: 'layer1/matmul', op: 'MatMul' } }
    ]
  };
  const t = buildTimeline(trace);
  assert.deepEqual(t.rows.map(r => r.label), ['/cpu:0 Compute / tid 1', '/cpu:0 Compute / tid 2']);
  assert.equal(t.start, 10);
  assert.equal(t.end, 23);
  assert.deepEqual([...opTimes(trace)], [['layer1/matmul', 8], ['layer1/relu', 2]]);
});

test('legends name runs after their folder, the log directory itself after its last component', () => {
  assert.equal(runLabel('train', 'logs'), 'train');
  assert.equal(runLabel('.', 'logs/mlp'), 'mlp');
  assert.equal(runLabel('.', '/home/me/logs/mlp/'), 'mlp');
  assert.equal(runLabel('.', '.'), 'run');
});
