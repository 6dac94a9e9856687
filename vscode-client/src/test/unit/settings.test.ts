import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  type ConfigSource,
  didChangeConfigurationParams,
  expandVariables,
  initializationOptions,
  needsRestart,
  readSettings,
} from '../../common/settings';

function source(values: Record<string, unknown>): ConfigSource {
  return { get: (key) => values[key] };
}

const VARS = { workspaceFolder: '/ws/proj', userHome: '/home/me', env: { VENV: '/opt/venv' } };

describe('readSettings', () => {
  it('sends nothing the user did not set', () => {
    const { settings, warnings } = readSettings(source({}), VARS);
    assert.deepEqual(settings, { interpreter: [], testRunner: 'terminal', server: {} });
    assert.deepEqual(warnings, []);
    assert.deepEqual(initializationOptions(settings), {});
  });

  it('reads every server setting into camelCase initializationOptions', () => {
    const { settings, warnings } = readSettings(
      source({
        baseline: 'saved',
        debounceMs: 400,
        maySeverity: 'hint',
        mustMin: 0.8,
        mayMin: 0.4,
        maxDepth: 2,
        pytestCommand: ['python', '-m', 'pytest', '-x'],
        python: '${workspaceFolder}/.venv/bin/python',
        llmBaseUrl: 'http://127.0.0.1:8080/v1',
        llmModel: 'qwen2.5-coder',
        llmApiKeyEnv: 'OPENAI_API_KEY',
        testRunner: 'server',
        interpreter: ['${workspaceFolder}/.venv/bin/python'],
      }),
      VARS,
    );
    assert.deepEqual(warnings, []);
    assert.equal(settings.testRunner, 'server');
    assert.deepEqual(settings.interpreter, ['/ws/proj/.venv/bin/python']);
    assert.deepEqual(initializationOptions(settings, '/usr/bin/python3'), {
      baseline: 'saved',
      debounceMs: 400,
      maySeverity: 'hint',
      mustMin: 0.8,
      mayMin: 0.4,
      maxDepth: 2,
      pytestCommand: ['python', '-m', 'pytest', '-x'],
      python: '/ws/proj/.venv/bin/python',
      llmBaseUrl: 'http://127.0.0.1:8080/v1',
      llmModel: 'qwen2.5-coder',
      llmApiKeyEnv: 'OPENAI_API_KEY',
    });
  });

  it('warns once per bad key, keeps the good ones, and collects every problem', () => {
    const { settings, warnings } = readSettings(
      source({
        baseline: 'yesterday',
        debounceMs: -5,
        maySeverity: 'HINT',
        mustMin: 1.5,
        mayMin: 0.3,
        maxDepth: 0,
        pytestCommand: [1, 2],
        llmBaseUrl: 'ftp://example.invalid',
        testRunner: 'cloud',
        interpreter: 42,
      }),
      VARS,
    );
    assert.deepEqual(warnings, [
      'impact.baseline = "yesterday": expected one of "head", "saved"; using the default',
      'impact.debounceMs = -5: expected an integer ≥ 0; using the default',
      'impact.mustMin = 1.5: expected a number between 0 and 1; using the default',
      'impact.maxDepth = 0: expected an integer ≥ 1; using the default',
      'impact.pytestCommand = [1,2]: expected a list of strings; using the default',
      'impact.llmBaseUrl = "ftp://example.invalid": expected an http:// or https:// URL; using the default',
      'impact.interpreter = 42: expected a list of strings; using the default',
      'impact.testRunner = "cloud": expected one of "terminal", "server"; using the default',
    ]);
    assert.deepEqual(settings.server, { maySeverity: 'hint', mayMin: 0.3 });
    assert.equal(settings.testRunner, 'terminal');
    assert.deepEqual(settings.interpreter, []);
  });

  it('refuses an API key pasted where the NAME of its variable belongs', () => {
    const { settings, warnings } = readSettings(
      source({ llmApiKeyEnv: 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789' }),
    );
    assert.equal(settings.server.llmApiKeyEnv, undefined);
    // The warning goes to the log, so it must not carry the key.
    assert.deepEqual(warnings, [
      'impact.llmApiKeyEnv = (hidden): looks like an API key; set the NAME of the environment variable that holds it and remove the key from your settings; using the default',
    ]);
    assert.deepEqual(readSettings(source({ llmApiKeyEnv: 'MY KEY' })).warnings, [
      'impact.llmApiKeyEnv = "MY KEY": expected the name of an environment variable; using the default',
    ]);
  });

  it('sends hierarchy: false to turn the call and type hierarchy off', () => {
    const { settings, warnings } = readSettings(source({ hierarchy: false }));
    assert.deepEqual(warnings, []);
    assert.deepEqual(initializationOptions(settings), { hierarchy: false });
    assert.deepEqual(readSettings(source({ hierarchy: 'no' })).warnings, [
      'impact.hierarchy = "no": expected true or false; using the default',
    ]);
  });

  it('splits a pytest command given as one string, as the server does', () => {
    const { settings } = readSettings(source({ pytestCommand: '  uv run pytest -q ' }));
    assert.deepEqual(settings.server.pytestCommand, ['uv', 'run', 'pytest', '-q']);
  });

  it('takes a single interpreter string as one path, spaces and all', () => {
    const { settings } = readSettings(
      source({ interpreter: '/Applications/My Python/bin/python3' }),
    );
    assert.deepEqual(settings.interpreter, ['/Applications/My Python/bin/python3']);
  });

  it('forwards changes as {"settings": {"impact": {...}}}', () => {
    const { settings } = readSettings(source({ maySeverity: 'off', mustMin: 0.9 }));
    assert.deepEqual(didChangeConfigurationParams(settings, '/py'), {
      settings: { impact: { maySeverity: 'off', mustMin: 0.9, python: '/py' } },
    });
  });
});

describe('expandVariables', () => {
  it('expands workspaceFolder, userHome, env and a leading tilde', () => {
    assert.equal(
      expandVariables('${workspaceFolder}/venv/bin/python', VARS),
      '/ws/proj/venv/bin/python',
    );
    assert.equal(expandVariables('${userHome}/py', VARS), '/home/me/py');
    assert.equal(expandVariables('${env:VENV}/bin/python', VARS), '/opt/venv/bin/python');
    assert.equal(expandVariables('${env:UNSET}/python', VARS), '/python');
    assert.equal(expandVariables('~/.venv/bin/python', VARS), '/home/me/.venv/bin/python');
    assert.equal(expandVariables('a~b', VARS), 'a~b');
  });

  it('leaves ${workspaceFolder} alone when there is no folder', () => {
    assert.equal(expandVariables('${workspaceFolder}/x', {}), '${workspaceFolder}/x');
  });
});

describe('needsRestart', () => {
  const base = readSettings(source({ interpreter: ['/a/python'], mustMin: 0.7 })).settings;

  it('restarts for another interpreter', () => {
    const other = readSettings(source({ interpreter: ['/b/python'], mustMin: 0.7 })).settings;
    assert.equal(needsRestart(base, other), true);
    const cleared = readSettings(source({ mustMin: 0.7 })).settings;
    assert.equal(needsRestart(base, cleared), true);
  });

  it('forwards every other change without a restart', () => {
    const other = readSettings(
      source({ interpreter: ['/a/python'], mustMin: 0.9, testRunner: 'server' }),
    ).settings;
    assert.equal(needsRestart(base, other), false);
  });
});
