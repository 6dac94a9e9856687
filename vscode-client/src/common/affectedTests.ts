/**
 * Affected tests: the command arguments, the terminal command line, and the outcome text.
 *
 * The server's `Run N affected tests` lens carries `[{"tests": [...ids], "root": "..."}]`.
 * In a terminal the tests run as `<interpreter> -m pytest <ids>` (or `impact.pytestCommand`
 * followed by the ids) from the root; through the server, `impact.runAffectedTests` returns
 * `{"outcome", "passed", "failed", "errors", "skipped", "selected", "failures", "message", …}`,
 * which becomes one verdict per test for the Test Results view.
 *
 * This module must not import `vscode`: it is unit-tested under plain Node.
 */

export interface TestSelection {
  tests: string[];
  root: string | undefined;
}

export interface TestFailure {
  test: string;
  /** Root-relative path and one-based line of the failure, when pytest said. */
  file: string;
  line: number | undefined;
  message: string;
  kind: 'failed' | 'errored';
}

export interface TestOutcome {
  passed: number;
  failed: number;
  errors: number;
  skipped: number;
  /** `passed`, `failed`, `no-tests`, `cancelled`, … as the server names the run's outcome. */
  outcome: string;
  selected: string[];
  failures: TestFailure[];
  /** The server's one-line summary, e.g. `3 failed in 0.6s`. */
  message: string;
}

/** What the Test Results view shows for one test. */
export interface TestVerdict {
  test: string;
  state: 'passed' | 'failed' | 'errored' | 'skipped' | 'unknown';
  failure?: TestFailure;
}

export type Shell = 'posix' | 'powershell' | 'cmd';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Read the lens/command arguments; `undefined` when they name no tests. */
export function parseTestSelection(args: readonly unknown[]): TestSelection | undefined {
  const first = args[0];
  if (!isObject(first) || !Array.isArray(first.tests)) {
    return undefined;
  }
  const tests = first.tests.filter((t): t is string => typeof t === 'string' && t !== '');
  if (tests.length === 0) {
    return undefined;
  }
  return {
    tests: [...new Set(tests)],
    root: typeof first.root === 'string' && first.root !== '' ? first.root : undefined,
  };
}

/** Quote one argument for the given shell, leaving plain words as they are. */
export function quoteArg(arg: string, shell: Shell): string {
  // A backslash is a path separator on Windows but an escape in a POSIX shell.
  const plain = shell === 'posix' ? /^[A-Za-z0-9_@%+=:,./-]+$/ : /^[A-Za-z0-9_@%+=:,./\\-]+$/;
  if (arg !== '' && plain.test(arg)) {
    return arg;
  }
  switch (shell) {
    case 'posix':
      return `'${arg.replace(/'/g, `'\\''`)}'`;
    case 'powershell':
      return `'${arg.replace(/'/g, "''")}'`;
    case 'cmd':
      return `"${arg.replace(/"/g, '""')}"`;
  }
}

/** The argv that runs the selected tests: the pytest command, else `<interpreter> -m pytest`. */
export function pytestArgv(
  interpreter: readonly string[],
  pytestCommand: readonly string[] | undefined,
  tests: readonly string[],
): string[] {
  const base =
    pytestCommand !== undefined && pytestCommand.length > 0
      ? [...pytestCommand]
      : [...interpreter, '-m', 'pytest'];
  return [...base, ...tests];
}

/** One terminal line that runs `argv`; PowerShell needs `&` to call a quoted program. */
export function commandLine(argv: readonly string[], shell: Shell): string {
  const quoted = argv.map((arg) => quoteArg(arg, shell));
  const line = quoted.join(' ');
  return shell === 'powershell' && quoted[0]?.startsWith("'") === true ? `& ${line}` : line;
}

function parseFailure(value: unknown, failedTests: number, index: number): TestFailure | undefined {
  if (!isObject(value) || typeof value.test !== 'string') {
    return undefined;
  }
  const line = value.line;
  return {
    test: value.test,
    file: typeof value.file === 'string' ? value.file : '',
    line: typeof line === 'number' && line > 0 ? line : undefined,
    message: typeof value.message === 'string' ? value.message : '',
    // The server lists failures before errors; the counts tell where one ends.
    kind: index < failedTests ? 'failed' : 'errored',
  };
}

/** Read the server's run result; missing counts are 0, a non-object is `undefined`. */
export function parseTestOutcome(value: unknown): TestOutcome | undefined {
  if (!isObject(value)) {
    return undefined;
  }
  const count = (key: string): number => {
    const v = value[key];
    if (typeof v === 'number' && Number.isFinite(v)) {
      return v;
    }
    return Array.isArray(v) ? v.length : 0;
  };
  const strings = (v: unknown): string[] =>
    Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];
  const failed = count('failed');
  const failures = Array.isArray(value.failures)
    ? value.failures
        .map((f, index) => parseFailure(f, failed, index))
        .filter((f): f is TestFailure => f !== undefined)
    : [];
  return {
    passed: count('passed'),
    failed,
    errors: count('errors'),
    skipped: count('skipped'),
    outcome: typeof value.outcome === 'string' ? value.outcome : '',
    selected: strings(value.selected),
    failures,
    message: typeof value.message === 'string' ? value.message : '',
  };
}

/**
 * One verdict per selected test. Failures are exact; the rest passed when the counts say every
 * other test passed, and stay `unknown` otherwise (the server does not list skipped tests).
 */
export function testVerdicts(outcome: TestOutcome, selection: readonly string[]): TestVerdict[] {
  const tests = outcome.selected.length > 0 ? outcome.selected : [...selection];
  const failures = new Map(outcome.failures.map((f) => [f.test, f]));
  const othersPassed =
    outcome.skipped === 0 && outcome.passed === tests.length - failures.size && outcome.passed > 0;
  const verdicts: TestVerdict[] = tests.map((test) => {
    const failure = failures.get(test);
    if (failure !== undefined) {
      return { test, state: failure.kind, failure };
    }
    if (outcome.outcome === 'cancelled') {
      return { test, state: 'skipped' };
    }
    return { test, state: othersPassed ? 'passed' : 'unknown' };
  });
  // Failures pytest reported under an id we did not select (a parametrized case, a module).
  for (const failure of outcome.failures) {
    if (!tests.includes(failure.test)) {
      verdicts.push({ test: failure.test, state: failure.kind, failure });
    }
  }
  return verdicts;
}

/** `Affected tests: 5 passed, 1 failed, 0 errors`. */
export function outcomeText(outcome: TestOutcome): string {
  const skipped = outcome.skipped > 0 ? `, ${outcome.skipped} skipped` : '';
  return `Affected tests: ${outcome.passed} passed, ${outcome.failed} failed, ${outcome.errors} errors${skipped}`;
}
