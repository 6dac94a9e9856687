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

describe('the server outcome', () => {
  it('reads the counts and keeps anything else as detail', () => {
    const outcome = parseTestOutcome({ passed: 5, failed: ['t.py::b'], errors: 0, note: 'x' });
    assert.deepEqual(outcome, { passed: 5, failed: 1, errors: 0, detail: 'note: x' });
    assert.ok(outcome);
    assert.equal(outcomeText(outcome), 'Affected tests: 5 passed, 1 failed, 0 errors');
    assert.equal(parseTestOutcome(null), undefined);
  });
});
