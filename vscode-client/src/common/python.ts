/**
 * Which Python runs the server, and whether impact_ls is importable there.
 *
 * Resolution order: the `impact.interpreter` setting, else the active environment of the Python
 * extension (behind an injected `PythonEnvironmentProvider`, so this is testable without it),
 * else `python3`. The import check and `pip install` run through an injected `ProcessRunner`;
 * `execFileRunner` is the real one.
 *
 * This module must not import `vscode`: it is unit-tested under plain Node.
 */

import { execFile } from 'node:child_process';

export type InterpreterSource = 'setting' | 'python-extension' | 'default';

export interface ResolvedInterpreter {
  /** The executable followed by any fixed arguments, e.g. `["/p/.venv/bin/python"]`. */
  command: string[];
  source: InterpreterSource;
}

/** The Python extension's view of the active environment, or nothing when it is absent. */
export interface PythonEnvironmentProvider {
  /** Path of the active interpreter for `resource` (a URI string), or `undefined`. */
  activeInterpreter(resource: string | undefined): Promise<string | undefined>;
}

export interface ProcessResult {
  /** Exit status, or `null` when the process could not start or was killed. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why the process did not run to completion (`ENOENT`, a timeout…), if it did not. */
  error?: string;
}

export interface ProcessRunner {
  run(
    command: string,
    args: readonly string[],
    options: { cwd?: string; timeoutMs: number },
  ): Promise<ProcessResult>;
}

export type ImportCheck =
  | { ok: true; version: string }
  | {
      ok: false;
      reason: 'interpreter-missing' | 'not-installed' | 'failed';
      detail: string;
      /** The interpreter's own path (`sys.executable`) when it ran, e.g. `/usr/bin/python3.11`. */
      executable?: string;
    };

export interface Log {
  info(message: string): void;
  warn(message: string): void;
}

export const DEFAULT_INTERPRETER = 'python3';
export const IMPORT_CHECK_TIMEOUT_MS = 20_000;
export const PIP_INSTALL_TIMEOUT_MS = 300_000;
export const PIP_PACKAGE = 'impact-ls';

// Prints the version on success; on failure the exception name tells "missing" from "broken",
// and "@ <sys.executable>" names the interpreter's real path (python3 is a name, not a path).
const IMPORT_PROBE =
  'import sys\n' +
  'try:\n' +
  '    import impact_ls\n' +
  'except ModuleNotFoundError as exc:\n' +
  '    sys.exit(("missing: %s" % exc.name if exc.name and exc.name.split(".")[0] == "impact_ls" else "broken: %r" % exc) + " @ " + sys.executable)\n' +
  'except Exception as exc:\n' +
  '    sys.exit("broken: %r @ %s" % (exc, sys.executable))\n' +
  'print(getattr(impact_ls, "__version__", "unknown"))\n';

/** Split the probe's last line into its message and the interpreter path after " @ ". */
function probeLine(line: string): { text: string; executable?: string } {
  const at = line.lastIndexOf(' @ ');
  if (at < 0) {
    return { text: line };
  }
  const executable = line.slice(at + 3).trim();
  return { text: line.slice(0, at), ...(executable !== '' ? { executable } : {}) };
}

/** Pick the interpreter: the setting, else the Python extension, else `python3`. */
export async function resolveInterpreter(
  setting: readonly string[],
  provider: PythonEnvironmentProvider | undefined,
  resource: string | undefined,
  log?: Log,
): Promise<ResolvedInterpreter> {
  if (setting.length > 0 && setting[0] !== undefined && setting[0] !== '') {
    return { command: [...setting], source: 'setting' };
  }
  if (provider !== undefined) {
    try {
      const active = await provider.activeInterpreter(resource);
      if (active !== undefined && active.trim() !== '') {
        return { command: [active], source: 'python-extension' };
      }
    } catch (error) {
      log?.warn(`The Python extension could not tell the active interpreter: ${String(error)}`);
    }
  }
  return { command: [DEFAULT_INTERPRETER], source: 'default' };
}

/** Split an interpreter command into the executable and its fixed arguments. */
export function executableOf(interpreter: ResolvedInterpreter): {
  command: string;
  args: string[];
} {
  const [command, ...args] = interpreter.command;
  return { command: command ?? DEFAULT_INTERPRETER, args };
}

/** `<interpreter> -m impact_ls serve`, the stdio language server. */
export function serverCommand(interpreter: ResolvedInterpreter): {
  command: string;
  args: string[];
} {
  const { command, args } = executableOf(interpreter);
  return { command, args: [...args, '-m', 'impact_ls', 'serve'] };
}

/** `<interpreter> -m pip install impact-ls`. */
export function pipInstallCommand(interpreter: ResolvedInterpreter): {
  command: string;
  args: string[];
} {
  const { command, args } = executableOf(interpreter);
  return { command, args: [...args, '-m', 'pip', 'install', PIP_PACKAGE] };
}

/** Run `<py> -c "import impact_ls"` and say whether the server can start. */
export async function checkImpactLs(
  interpreter: ResolvedInterpreter,
  runner: ProcessRunner,
  cwd?: string,
): Promise<ImportCheck> {
  const { command, args } = executableOf(interpreter);
  const result = await runner.run(command, [...args, '-c', IMPORT_PROBE], {
    cwd,
    timeoutMs: IMPORT_CHECK_TIMEOUT_MS,
  });
  if (result.code === 0) {
    const version = result.stdout.trim().split(/\r?\n/).pop() ?? 'unknown';
    return { ok: true, version: version === '' ? 'unknown' : version };
  }
  if (result.error === 'ENOENT' || result.error === 'EACCES') {
    return {
      ok: false,
      reason: 'interpreter-missing',
      detail: `cannot run ${interpreter.command.join(' ')} (${result.error})`,
    };
  }
  const { text: lastLine, executable } = probeLine(result.stderr.trim().split(/\r?\n/).pop() ?? '');
  const where = executable ?? interpreter.command.join(' ');
  if (lastLine.startsWith('missing:')) {
    return {
      ok: false,
      reason: 'not-installed',
      detail: `impact_ls is not installed for ${where}`,
      ...(executable !== undefined ? { executable } : {}),
    };
  }
  return {
    ok: false,
    reason: 'failed',
    detail: `${where} could not import impact_ls: ${
      lastLine || result.error || `exit status ${String(result.code)}`
    }`,
    ...(executable !== undefined ? { executable } : {}),
  };
}

/**
 * The not-installed notification: which interpreter (its real path, and the command it was
 * given as when they differ, with where that came from) and the command that fixes it.
 */
export function notInstalledMessage(
  interpreter: ResolvedInterpreter,
  executable: string | undefined,
): string {
  const given = interpreter.command.join(' ');
  const from: Record<InterpreterSource, string> = {
    setting: 'the impact.interpreter setting',
    'python-extension': "the Python extension's environment",
    default: 'the default, as neither impact.interpreter nor the Python extension names one',
  };
  const path = executable ?? given;
  const via = executable !== undefined && executable !== given ? ` (${given}, ` : ' (';
  return (
    `Impact: impact_ls is not installed for ${path}${via}${from[interpreter.source]}). ` +
    `Fix: run ${path} -m pip install ${PIP_PACKAGE}, or set impact.interpreter to a Python ` +
    'that has it.'
  );
}

/** Explain where an interpreter came from, for the log and the status item. */
export function describeInterpreter(interpreter: ResolvedInterpreter): string {
  const from: Record<InterpreterSource, string> = {
    setting: 'from impact.interpreter',
    'python-extension': "from the Python extension's active environment",
    default: 'the default; set impact.interpreter or install the Python extension to choose',
  };
  return `${interpreter.command.join(' ')} (${from[interpreter.source]})`;
}

/** The real `ProcessRunner`: `child_process.execFile` without a shell. */
export const execFileRunner: ProcessRunner = {
  run(command, args, options) {
    return new Promise((resolve) => {
      execFile(
        command,
        [...args],
        {
          cwd: options.cwd,
          timeout: options.timeoutMs,
          windowsHide: true,
          maxBuffer: 4 * 1024 * 1024,
        },
        (error, stdout, stderr) => {
          if (error === null) {
            resolve({ code: 0, stdout, stderr });
            return;
          }
          const code = typeof error.code === 'number' ? error.code : null;
          const reason =
            typeof error.code === 'string' ? error.code : error.killed ? 'timeout' : undefined;
          resolve({ code, stdout, stderr, ...(reason !== undefined ? { error: reason } : {}) });
        },
      );
    });
  },
};
