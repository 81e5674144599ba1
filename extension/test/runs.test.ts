import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import {
  RunColors,
  RunRow,
  RUN_PALETTE,
  filterRuns,
  formatLogdirSpec,
  hparamColumns,
  metricColumns,
  naturalCompare,
  parseLogdirSpec,
  runId,
  sortRuns
} from '../src/model/runs';

test('a logdir spec names several directories as tensorboards --logdir_spec', () => {
  assert.deepEqual(parseLogdirSpec('logs'), [{ name: '', path: 'logs' }]);
  assert.deepEqual(parseLogdirSpec('a:logs/x, b:logs/y'), [
    { name: 'a', path: 'logs/x' },
    { name: 'b', path: 'logs/y' }
  ]);
  assert.deepEqual(parseLogdirSpec('logs/x,b:logs/y'), [
    { name: 'logs/x', path: 'logs/x' },
    { name: 'b', path: 'logs/y' }
  ]);
  assert.deepEqual(parseLogdirSpec('C:\\logs'), [{ name: '', path: 'C:\\logs' }]);
  assert.deepEqual(parseLogdirSpec('a:/srv/x,b:/srv/y'), [
    { name: 'a', path: '/srv/x' },
    { name: 'b', path: '/srv/y' }
  ]);
  assert.deepEqual(parseLogdirSpec(''), [{ name: '', path: '.' }]);
  assert.throws(() => parseLogdirSpec('a:x,a:y'), /given twice/);
  assert.equal(formatLogdirSpec(parseLogdirSpec('a:logs/x,logs/y')), 'a:logs/x,logs/y');
});

test('runs of several directories are prefixed with the directory name', () => {
  const a = { name: 'a', path: 'logs/x' };
  assert.equal(runId(a, 'train', false), 'train');
  assert.equal(runId(a, 'train', true), 'a/train');
  assert.equal(runId(a, '.', true), 'a');
});

test('a run keeps its colour when others appear before it or are hidden', () => {
  const colors = new RunColors();
  colors.assign(['b', 'c']);
  const b = colors.color('b');
  const c = colors.color('c');
  colors.assign(['a', 'b', 'c']); // a new run that sorts first
  assert.equal(colors.color('b'), b);
  assert.equal(colors.color('c'), c);
  assert.equal(colors.color('a'), RUN_PALETTE[2]);
  assert.notEqual(colors.color('a'), b);
});

const rows: RunRow[] = [
  { id: 'run10', hparams: { lr: 0.1, optimizer: 'sgd' }, metrics: { loss: 0.5 } },
  { id: 'run2', hparams: { lr: 0.01, optimizer: 'adam', dropout: true }, metrics: { loss: 0.2 } },
  { id: 'run1', hparams: { lr: 0.001, optimizer: 'adam' }, metrics: { loss: null } },
  { id: 'old', hparams: {} }
];

test('the runs table sorts by a column, numbers as numbers, missing values last', () => {
  assert.deepEqual(hparamColumns(rows), ['dropout', 'lr', 'optimizer']);
  assert.deepEqual(sortRuns(rows, 'lr').map(r => r.id), ['run1', 'run2', 'run10', 'old']);
  assert.deepEqual(sortRuns(rows, 'lr', true).map(r => r.id), ['run10', 'run2', 'run1', 'old']);
  assert.deepEqual(sortRuns(rows, 'run').map(r => r.id), ['old', 'run1', 'run2', 'run10']);
  assert.deepEqual(sortRuns(rows, 'optimizer').map(r => r.id), ['run1', 'run2', 'run10', 'old']);
  assert.deepEqual(metricColumns(rows), ['metric:loss']);
  assert.deepEqual(sortRuns(rows, 'metric:loss').map(r => r.id), ['run2', 'run10', 'old', 'run1'], 'a diverged (null) loss sorts with the missing');
});

test('run names sort naturally, decimals included', () => {
  assert.deepEqual(['lr0.3', 'lr0.1', 'lr0.03', 'run10', 'run2'].sort(naturalCompare), ['lr0.03', 'lr0.1', 'lr0.3', 'run2', 'run10']);
});

test('the runs filter matches names and name=value settings', () => {
  assert.deepEqual(filterRuns(rows, 'optimizer=adam').map(r => r.id), ['run2', 'run1']);
  assert.deepEqual(filterRuns(rows, '^run1').map(r => r.id), ['run10', 'run1']);
  assert.deepEqual(filterRuns(rows, 'lr=0.1$').map(r => r.id), ['run10']);
  assert.deepEqual(filterRuns(rows, '(').map(r => r.id), [], 'not a regex: a substring');
  assert.equal(filterRuns(rows, '  ').length, 4);
});
