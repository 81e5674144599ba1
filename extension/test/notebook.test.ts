import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { detailRows, fromKernelHistograms, fromKernelSeries } from '../src/model/notebook';
import { percentiles } from '../src/model/histogram';
import { xValues } from '../src/model/series';

test('detail rows show where an op was created and its last values', () => {
  const rows = detailRows({
    name: 'loss',
    created: { cell: 'model', line: 3, source: 'loss = tf.reduce_sum(h)' },
    values: { 'loss:0': '5' }
  });
  assert.deepEqual(rows, [
    ['created', "cell 'model', line 3"],
    ['source', 'loss = tf.reduce_sum(h)'],
    ['last loss:0', '5']
  ]);
  assert.deepEqual(detailRows({ name: 'x', created: { file: 'train.py', line: 9 } }), [['created', 'train.py, line 9']]);
  assert.deepEqual(detailRows({}), []);
});

test('kernel series become chart series with wall-time axes', () => {
  const [s] = fromKernelSeries([{ run: 'mlp', tag: 'mse', steps: [0, 1], wall_times: [10, 12], values: [2, 1] }]);
  assert.equal(s.nextOffset, 2);
  assert.deepEqual(xValues(s, 'relative'), [0, 2]);
  assert.deepEqual(xValues(s, 'wall'), [10, 12]);
});

test('the kernel sends histograms in the Board route\'s JSON, ready for the views', () => {
  // values 0.5, 1.5, 1.5, 2.5 in buckets [0,1) [1,2) [2,3): the median lies in the second
  const h = { min: 0.5, max: 2.5, num: 4, sum: 6, sum_squares: 11, bucket_limit: [1, 2, 3], bucket: [1, 2, 1] };
  const [s] = fromKernelHistograms([{ run: 'mlp', tag: 'w', steps: [7], wall_times: [10], values: [h] }]);
  assert.deepEqual([s.run, s.tag, s.steps, s.nextOffset], ['mlp', 'w', [7], 1]);
  const [min, median, max] = percentiles(s.values[0], [0, 5000, 10000]);
  assert.deepEqual([min, median, max], [0.5, 1.5, 2.5]);
});
