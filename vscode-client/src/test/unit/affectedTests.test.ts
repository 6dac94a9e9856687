import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';

import {
  commandLine,
  outcomeText,
  parseTestOutcome,
  parseTestSelection,
  pytestArgv,
  quoteArg,
  testVerdicts,
} from '../../common/affectedTests';

describe('parseTestSelection', () => {
  it('reads the lens arguments, dropping duplicates', () => {
    assert.deepEqual(
      parseTestSelection([{ tests: ['t.py::a', 't.py::b', 't.py::a'], root: '/ws' }]),
      { tests: ['t.py::a', 't.py::b'], root: '/ws' },
    );
  });

  it('has nothing to run without test ids', () => {
    assert.equal(parseTestSelection([]), undefined);
    assert.equal(parseTestSelection([{ tests: [] }]), undefined);
    assert.equal(parseTestSelection([{ tests: [3, ''] }]), undefined);
    assert.equal(parseTestSelection(['t.py::a']), undefined);
  });
});

describe('the terminal command line', () => {
  it('runs <interpreter> -m pytest <ids>, or the configured pytest command', () => {
    assert.deepEqual(pytestArgv(['/v/python'], undefined, ['t.py::a']), [
      '/v/python',
      '-m',
      'pytest',
      't.py::a',
    ]);
    assert.deepEqual(pytestArgv(['/v/python'], ['uv', 'run', 'pytest'], ['t.py::a']), [
      'uv',
      'run',
      'pytest',
      't.py::a',
    ]);
  });

  it('quotes for each shell', () => {
    assert.equal(quoteArg('tests/t.py::test_x', 'posix'), 'tests/t.py::test_x');
    assert.equal(quoteArg("t.py::test_x[it's 1]", 'posix'), `'t.py::test_x[it'\\''s 1]'`);
    assert.equal(quoteArg("a b'c", 'powershell'), "'a b''c'");
    assert.equal(quoteArg('a "b"', 'cmd'), '"a ""b"""');
    assert.equal(
      commandLine(['C:\\Program Files\\Python\\python.exe', '-m', 'pytest'], 'powershell'),
      "& 'C:\\Program Files\\Python\\python.exe' -m pytest",
    );
  });

  it('survives a real POSIX shell unchanged', () => {
    const argv = ['printf', '%s\\n', "t.py::test_x[it's 1]", 'a b', '$HOME', 'x;y', ''];
    const out = execFileSync('sh', ['-c', commandLine(argv, 'posix')], { encoding: 'utf8' });
    assert.deepEqual(out.split('\n').slice(0, -1), argv.slice(2));
  });
});

// The shape of RunResult.as_dict() in impact_ls/server/testrun.py.
const SERVER_RESULT = {
  outcome: 'failed',
  passed: 1,
  failed: 1,
  errors: 1,
  skipped: 0,
  selected: ['tests/t.py::test_a', 'tests/t.py::test_b', 'tests/t.py::test_c'],
  failures: [
    { test: 'tests/t.py::test_b', file: 'tests/t.py', line: 7, message: 'assert 1 == 2' },
    { test: 'tests/t.py::test_c', file: 'tests/t.py', line: 0, message: 'fixture db not found' },
  ],
  message: '1 passed, 1 failed, 1 error in 0.12s',
  returncode: 1,
  duration_s: 0.123,
  command: ['python', '-m', 'pytest'],
};

describe('the server outcome', () => {
  it('reads the counts, the failures and the summary', () => {
    const outcome = parseTestOutcome(SERVER_RESULT);
    assert.ok(outcome);
    assert.equal(outcomeText(outcome), 'Affected tests: 1 passed, 1 failed, 1 errors');
    assert.equal(outcome.message, '1 passed, 1 failed, 1 error in 0.12s');
    assert.deepEqual(outcome.failures, [
      {
        test: 'tests/t.py::test_b',
        file: 'tests/t.py',
        line: 7,
        message: 'assert 1 == 2',
        kind: 'failed',
      },
      {
        test: 'tests/t.py::test_c',
        file: 'tests/t.py',
        line: undefined,
        message: 'fixture db not found',
        kind: 'errored',
      },
    ]);
    assert.equal(parseTestOutcome(null), undefined);
    assert.equal(parseTestOutcome([1]), undefined);
  });

  it('gives one verdict per selected test for the Test Results view', () => {
    const outcome = parseTestOutcome(SERVER_RESULT);
    assert.ok(outcome);
    assert.deepEqual(
      testVerdicts(outcome, []).map((v) => [v.test, v.state]),
      [
        ['tests/t.py::test_a', 'passed'],
        ['tests/t.py::test_b', 'failed'],
        ['tests/t.py::test_c', 'errored'],
      ],
    );
  });

  it('does not claim a pass the counts cannot prove', () => {
    const outcome = parseTestOutcome({ ...SERVER_RESULT, passed: 0, skipped: 1 });
    assert.ok(outcome);
    assert.equal(testVerdicts(outcome, [])[0]?.state, 'unknown');
    const cancelled = parseTestOutcome({ outcome: 'cancelled', selected: ['t.py::x'] });
    assert.ok(cancelled);
    assert.deepEqual(testVerdicts(cancelled, []), [{ test: 't.py::x', state: 'skipped' }]);
  });

  it('adds failures reported under ids that were not selected', () => {
    const outcome = parseTestOutcome({
      passed: 0,
      failed: 1,
      failures: [{ test: 't.py::test_p[1]', file: 't.py', line: 3, message: 'boom' }],
    });
    assert.ok(outcome);
    assert.deepEqual(
      testVerdicts(outcome, ['t.py::test_p']).map((v) => [v.test, v.state]),
      [
        ['t.py::test_p', 'unknown'],
        ['t.py::test_p[1]', 'failed'],
      ],
    );
  });
});
