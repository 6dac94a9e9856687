/**
 * Affected tests: the command arguments, the terminal command line, and the outcome text.
 *
 * The server's `Run N affected tests` lens carries `[{"tests": [...ids], "root": "..."}]`.
 * In a terminal the tests run as `<interpreter> -m pytest <ids>` (or `impact.pytestCommand`
 * followed by the ids) from the root; through the server, `impact.runAffectedTests` returns
 * `{"passed", "failed", "errors"}`.
 *
 * This module must not import `vscode`: it is unit-tested under plain Node.
 */

export interface TestSelection {
  tests: string[];
  root: string | undefined;
}

export interface TestOutcome {
  passed: number;
  failed: number;
  errors: number;
  /** Anything else the server said, e.g. a failing test list or why nothing ran. */
  detail: string;
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

/** Read `{"passed","failed","errors"}`; missing counts are 0, a non-object is `undefined`. */
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
  const extras = Object.entries(value)
    .filter(([key]) => !['passed', 'failed', 'errors'].includes(key))
    .map(([key, v]) => `${key}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return {
    passed: count('passed'),
    failed: count('failed'),
    errors: count('errors'),
    detail: extras.join('\n'),
  };
}

/** `Affected tests: 5 passed, 1 failed, 0 errors`. */
export function outcomeText(outcome: TestOutcome): string {
  return `Affected tests: ${outcome.passed} passed, ${outcome.failed} failed, ${outcome.errors} errors`;
}
