import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import {
  type PythonEnvironmentProvider,
  checkImpactLs,
  describeInterpreter,
  execFileRunner,
  notInstalledMessage,
  pipInstallCommand,
  resolveInterpreter,
  serverCommand,
} from '../../common/python';

/** A provider as the Python extension would answer, recording what it was asked. */
function provider(answer: () => Promise<string | undefined>): PythonEnvironmentProvider & {
  asked: (string | undefined)[];
} {
  const asked: (string | undefined)[] = [];
  return {
    asked,
    activeInterpreter(resource) {
      asked.push(resource);
      return answer();
    },
  };
}

function recordingLog(): { info(m: string): void; warn(m: string): void; warnings: string[] } {
  const warnings: string[] = [];
  return { info: () => undefined, warn: (m) => warnings.push(m), warnings };
}

describe('resolveInterpreter', () => {
  it('takes impact.interpreter first and does not ask the Python extension', async () => {
    const ext = provider(() => Promise.resolve('/ext/python'));
    const resolved = await resolveInterpreter(
      ['/venv/bin/python', '-X', 'utf8'],
      ext,
      'file:///ws',
    );
    assert.deepEqual(resolved, { command: ['/venv/bin/python', '-X', 'utf8'], source: 'setting' });
    assert.deepEqual(ext.asked, []);
  });

  it("takes the Python extension's active environment for the workspace folder", async () => {
    const ext = provider(() => Promise.resolve('/home/me/.venv/bin/python'));
    const resolved = await resolveInterpreter([], ext, 'file:///ws');
    assert.deepEqual(resolved, {
      command: ['/home/me/.venv/bin/python'],
      source: 'python-extension',
    });
    assert.deepEqual(ext.asked, ['file:///ws']);
  });

  it('falls back to python3 without the Python extension', async () => {
    assert.deepEqual(await resolveInterpreter([], undefined, undefined), {
      command: ['python3'],
      source: 'default',
    });
  });

  it('falls back to python3 when the extension knows no environment', async () => {
    const resolved = await resolveInterpreter(
      [],
      provider(() => Promise.resolve('  ')),
      undefined,
    );
    assert.deepEqual(resolved, { command: ['python3'], source: 'default' });
  });

  it('falls back to python3, with a warning, when the extension fails', async () => {
    const log = recordingLog();
    const resolved = await resolveInterpreter(
      [],
      provider(() => Promise.reject(new Error('not ready'))),
      undefined,
      log,
    );
    assert.deepEqual(resolved, { command: ['python3'], source: 'default' });
    assert.deepEqual(log.warnings, [
      'The Python extension could not tell the active interpreter: Error: not ready',
    ]);
  });

  it('ignores an empty first element in the setting', async () => {
    const resolved = await resolveInterpreter([''], undefined, undefined);
    assert.equal(resolved.source, 'default');
  });
});

describe('commands', () => {
  const venv = { command: ['/v/bin/python', '-X', 'utf8'], source: 'setting' as const };

  it('launches <interpreter> -m impact_ls serve', () => {
    assert.deepEqual(serverCommand(venv), {
      command: '/v/bin/python',
      args: ['-X', 'utf8', '-m', 'impact_ls', 'serve'],
    });
  });

  it('installs with <interpreter> -m pip install impact-ls', () => {
    assert.deepEqual(pipInstallCommand(venv), {
      command: '/v/bin/python',
      args: ['-X', 'utf8', '-m', 'pip', 'install', 'impact-ls'],
    });
  });

  it('says where the interpreter came from', () => {
    assert.equal(
      describeInterpreter({ command: ['python3'], source: 'default' }),
      'python3 (the default; set impact.interpreter or install the Python extension to choose)',
    );
  });
});

// These run a real python3: the check is only as good as what it does in a real interpreter.
describe('checkImpactLs with a real interpreter', () => {
  let dir = '';
  const project = (name: string, init: string): string => {
    const root = join(dir, name);
    mkdirSync(join(root, 'impact_ls'), { recursive: true });
    writeFileSync(join(root, 'impact_ls', '__init__.py'), init);
    return root;
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'impact-python-'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports the version when impact_ls imports', async () => {
    const root = project('good', '__version__ = "9.8.7"\n');
    const check = await checkImpactLs(
      { command: ['python3'], source: 'default' },
      execFileRunner,
      root,
    );
    assert.deepEqual(check, { ok: true, version: '9.8.7' });
  });

  it('says "not installed" when the module is absent', async () => {
    // -I -S: no site-packages and no current directory, so nothing provides impact_ls.
    const interpreter = { command: ['python3', '-I', '-S'], source: 'setting' as const };
    const check = await checkImpactLs(interpreter, execFileRunner, dir);
    assert.ok(!check.ok);
    assert.equal(check.reason, 'not-installed');
    // python3 is a name; the message names the interpreter's real path
    const executable = check.executable ?? '';
    assert.ok(isAbsolute(executable), executable);
    assert.equal(check.detail, `impact_ls is not installed for ${executable}`);
    assert.equal(
      notInstalledMessage(interpreter, executable),
      `Impact: impact_ls is not installed for ${executable} (python3 -I -S, the impact.interpreter ` +
        `setting). Fix: run ${executable} -m pip install impact-ls, or set impact.interpreter to ` +
        'a Python that has it.',
    );
  });

  it('tells a broken install from a missing one', async () => {
    const root = project('broken', 'import a_dependency_that_is_not_there\n');
    const check = await checkImpactLs(
      { command: ['python3'], source: 'default' },
      execFileRunner,
      root,
    );
    assert.ok(!check.ok);
    assert.equal(check.reason, 'failed');
    assert.match(check.detail, /a_dependency_that_is_not_there/);
  });

  it('says the interpreter is missing when it does not exist', async () => {
    const interpreter = { command: [join(dir, 'no-such-python')], source: 'setting' as const };
    const check = await checkImpactLs(interpreter, execFileRunner, dir);
    assert.deepEqual(check, {
      ok: false,
      reason: 'interpreter-missing',
      detail: `cannot run ${join(dir, 'no-such-python')} (ENOENT)`,
    });
  });
});
