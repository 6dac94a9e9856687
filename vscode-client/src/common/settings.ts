/**
 * The extension's settings, typed with string-literal unions, and their pure readers.
 *
 * Server settings are sent to `python -m impact_ls serve` as `initializationOptions` and
 * forwarded through `workspace/didChangeConfiguration`, camelCase on the wire. Only the keys the
 * user actually set are sent, so `[tool.impact-ls]` in the project's pyproject.toml is not
 * overridden by a client default. A bad value yields one warning and that key keeps its default;
 * every problem is collected before any is reported.
 *
 * This module must not import `vscode`: it is unit-tested under plain Node.
 */

import * as os from 'node:os';
import * as path from 'node:path';

export type Baseline = 'head' | 'saved';
export type MaySeverity = 'information' | 'hint' | 'off';
export type TestRunner = 'terminal' | 'server';

export const BASELINES: readonly Baseline[] = ['head', 'saved'];
export const MAY_SEVERITIES: readonly MaySeverity[] = ['information', 'hint', 'off'];
export const TEST_RUNNERS: readonly TestRunner[] = ['terminal', 'server'];

/** Settings the language server reads; absent means "not set by the user". */
export interface ServerSettings {
  baseline?: Baseline;
  debounceMs?: number;
  maySeverity?: MaySeverity;
  mustMin?: number;
  mayMin?: number;
  maxDepth?: number;
  pytestCommand?: string[];
  python?: string;
  llmBaseUrl?: string;
  llmModel?: string;
  llmApiKeyEnv?: string;
  hierarchy?: boolean;
}

export type ServerSettingKey = keyof ServerSettings;

/** Every server setting key, in the order they are documented. */
export const SERVER_SETTING_KEYS: readonly ServerSettingKey[] = [
  'baseline',
  'debounceMs',
  'maySeverity',
  'mustMin',
  'mayMin',
  'maxDepth',
  'pytestCommand',
  'python',
  'llmBaseUrl',
  'llmModel',
  'llmApiKeyEnv',
  'hierarchy',
];

/** Everything the extension is configured with, for one workspace folder. */
export interface ISettings {
  /** Command (and arguments) of the interpreter that runs the server; empty = resolve. */
  interpreter: string[];
  testRunner: TestRunner;
  server: ServerSettings;
}

/** Reads one `impact.<key>` setting; `undefined` when the user has not set it anywhere. */
export interface ConfigSource {
  get(key: string): unknown;
}

/** What `${…}` variables in path settings expand to. */
export interface VariableContext {
  workspaceFolder?: string;
  userHome?: string;
  env?: Readonly<Record<string, string | undefined>>;
}

export interface ParsedSettings {
  settings: ISettings;
  warnings: string[];
}

export const DEFAULT_SETTINGS: ISettings = { interpreter: [], testRunner: 'terminal', server: {} };

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// Shapes of real API keys: pasting one into settings would put a secret in settings.json.
const LOOKS_LIKE_A_KEY = /^(sk-|sk_|xai-|gsk_|hf_|AIza)|^[A-Za-z0-9_-]{32,}$/;

/** Expand `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~`. */
export function expandVariables(value: string, vars: VariableContext): string {
  const home = vars.userHome ?? os.homedir();
  let out = value.replace(
    /\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}/g,
    (match, name: string, envName?: string) => {
      if (name === 'workspaceFolder') {
        return vars.workspaceFolder ?? match;
      }
      if (name === 'userHome') {
        return home;
      }
      return (envName !== undefined ? vars.env?.[envName] : undefined) ?? '';
    },
  );
  if (out === '~' || out.startsWith('~/')) {
    out = path.join(home, out.slice(1));
  }
  return out;
}

type Checked<T> = { ok: true; value: T } | { ok: false; error: string };
type Check<T> = (value: unknown) => Checked<T>;

const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const bad = <T>(error: string): Checked<T> => ({ ok: false, error });

function literal<T extends string>(choices: readonly T[]): Check<T> {
  return (value) => {
    const lower = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
    const found = choices.find((choice) => choice === lower);
    return found !== undefined
      ? ok(found)
      : bad(`expected one of ${choices.map((c) => `"${c}"`).join(', ')}`);
  };
}

function integer(min: number): Check<number> {
  return (value) =>
    typeof value === 'number' && Number.isInteger(value) && value >= min
      ? ok(value)
      : bad(`expected an integer ≥ ${min}`);
}

const fraction: Check<number> = (value) =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1
    ? ok(value)
    : bad('expected a number between 0 and 1');

const flag: Check<boolean> = (value) =>
  typeof value === 'boolean' ? ok(value) : bad('expected true or false');

const text: Check<string> = (value) =>
  typeof value === 'string' ? ok(value.trim()) : bad('expected a string');

/** A list of strings; a single string is split on whitespace, as the server does. */
const stringList: Check<string[]> = (value) => {
  if (typeof value === 'string') {
    return ok(value.split(/\s+/).filter((part) => part.length > 0));
  }
  if (Array.isArray(value) && value.every((item): item is string => typeof item === 'string')) {
    return ok([...value]);
  }
  return bad('expected a list of strings');
};

const url: Check<string> = (value) => {
  if (typeof value !== 'string') {
    return bad('expected a URL');
  }
  const trimmed = value.trim();
  if (trimmed === '') {
    return ok(trimmed);
  }
  try {
    const parsed = new URL(trimmed);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:'
      ? ok(trimmed)
      : bad('expected an http:// or https:// URL');
  } catch {
    return bad('expected an http:// or https:// URL');
  }
};

const envName: Check<string> = (value) => {
  if (typeof value !== 'string') {
    return bad('expected the name of an environment variable');
  }
  const trimmed = value.trim();
  if (trimmed === '') {
    return ok(trimmed);
  }
  // Checked first: a key that happens to be a valid identifier must still be refused.
  if (LOOKS_LIKE_A_KEY.test(trimmed)) {
    return bad(
      'looks like an API key; set the NAME of the environment variable that holds it and remove the key from your settings',
    );
  }
  return ENV_NAME.test(trimmed) ? ok(trimmed) : bad('expected the name of an environment variable');
};

const SERVER_CHECKS: { [K in ServerSettingKey]-?: Check<NonNullable<ServerSettings[K]>> } = {
  baseline: literal(BASELINES),
  debounceMs: integer(0),
  maySeverity: literal(MAY_SEVERITIES),
  mustMin: fraction,
  mayMin: fraction,
  maxDepth: integer(1),
  pytestCommand: stringList,
  python: text,
  llmBaseUrl: url,
  llmModel: text,
  llmApiKeyEnv: envName,
  hierarchy: flag,
};

function describe(value: unknown): string {
  try {
    // JSON.stringify gives undefined for these, whatever its declared type says.
    return value === undefined || typeof value === 'function' || typeof value === 'symbol'
      ? String(value)
      : JSON.stringify(value);
  } catch {
    return String(value);
  }
}

function readServerKey<K extends ServerSettingKey>(
  key: K,
  check: Check<NonNullable<ServerSettings[K]>>,
  raw: unknown,
  server: ServerSettings,
  warnings: string[],
): void {
  const checked = check(raw);
  if (checked.ok) {
    server[key] = checked.value;
  } else {
    // Never echo something that looks like a secret into the log.
    const shown =
      typeof raw === 'string' && LOOKS_LIKE_A_KEY.test(raw.trim()) ? '(hidden)' : describe(raw);
    warnings.push(`impact.${key} = ${shown}: ${checked.error}; using the default`);
  }
}

/** Read every `impact.*` setting; bad values are dropped with one warning each. */
export function readSettings(source: ConfigSource, vars: VariableContext = {}): ParsedSettings {
  const warnings: string[] = [];
  const server: ServerSettings = {};
  for (const key of SERVER_SETTING_KEYS) {
    const raw = source.get(key);
    if (raw === undefined || raw === null) {
      continue;
    }
    readServerKey(key, SERVER_CHECKS[key], raw, server, warnings);
  }
  if (server.python !== undefined) {
    server.python = server.python === '' ? '' : expandVariables(server.python, vars);
  }

  let interpreter: string[] = [];
  const rawInterpreter = source.get('interpreter');
  if (rawInterpreter !== undefined && rawInterpreter !== null) {
    // A single string is one path (it may contain spaces), unlike pytestCommand.
    const checked =
      typeof rawInterpreter === 'string' ? ok([rawInterpreter]) : stringList(rawInterpreter);
    if (!checked.ok) {
      warnings.push(
        `impact.interpreter = ${describe(rawInterpreter)}: ${checked.error}; using the default`,
      );
    } else {
      interpreter = checked.value
        .map((part) => part.trim())
        .filter((part) => part.length > 0)
        .map((part) => expandVariables(part, vars));
    }
  }

  let testRunner: TestRunner = DEFAULT_SETTINGS.testRunner;
  const rawRunner = source.get('testRunner');
  if (rawRunner !== undefined && rawRunner !== null) {
    const checked = literal(TEST_RUNNERS)(rawRunner);
    if (checked.ok) {
      testRunner = checked.value;
    } else {
      warnings.push(
        `impact.testRunner = ${describe(rawRunner)}: ${checked.error}; using the default`,
      );
    }
  }
  return { settings: { interpreter, testRunner, server }, warnings };
}

/** The camelCase `initializationOptions`; `python` falls back to the interpreter running the server. */
export function initializationOptions(
  settings: ISettings,
  serverInterpreter?: string,
): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  for (const key of SERVER_SETTING_KEYS) {
    const value = settings.server[key];
    if (value !== undefined) {
      options[key] = Array.isArray(value) ? [...value] : value;
    }
  }
  if ((settings.server.python ?? '') === '' && serverInterpreter !== undefined) {
    options.python = serverInterpreter;
  }
  return options;
}

/** The `workspace/didChangeConfiguration` params the server expects. */
export function didChangeConfigurationParams(
  settings: ISettings,
  serverInterpreter?: string,
): { settings: { impact: Record<string, unknown> } } {
  return { settings: { impact: initializationOptions(settings, serverInterpreter) } };
}

/** Only a different interpreter needs a new server process; the rest is forwarded live. */
export function needsRestart(before: ISettings, after: ISettings): boolean {
  return (
    before.interpreter.length !== after.interpreter.length ||
    before.interpreter.some((part, index) => part !== after.interpreter[index])
  );
}
