/**
 * Helpers of the end-to-end test: code-server (VS Code 1.100.3 in the browser) installed by
 * `scripts/install-code-server.sh`, a fixture workspace with planted git history, and a Python
 * interpreter that can import impact_ls.
 */

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

export const CLIENT_DIR = resolve(__dirname, '..', '..', '..');
export const REPO_DIR = resolve(CLIENT_DIR, '..');
export const ARTIFACTS_DIR = join(REPO_DIR, '.test-artifacts', 'vscode-e2e');

/** Install code-server once (idempotent) and return its entry script. */
export function installCodeServer(): string {
  const out = execFileSync('bash', [join(CLIENT_DIR, 'scripts', 'install-code-server.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const dir = out.trim().split('\n').pop() ?? '';
  const entry = join(dir, 'package', 'out', 'node', 'entry.js');
  if (!existsSync(entry)) {
    throw new Error(`install-code-server.sh printed ${JSON.stringify(dir)}, which has no entry.js`);
  }
  return entry;
}

/** The packaged extension; built with `npm run package` when it is not there yet. */
export function builtVsix(): string {
  const pkg: unknown = JSON.parse(readFileSync(join(CLIENT_DIR, 'package.json'), 'utf8'));
  const version =
    typeof pkg === 'object' && pkg !== null && 'version' in pkg && typeof pkg.version === 'string'
      ? pkg.version
      : '0.0.0';
  const vsix = join(CLIENT_DIR, `impact-ls-${version}.vsix`);
  if (!existsSync(vsix)) {
    execFileSync('npm', ['run', 'package'], { cwd: CLIENT_DIR, stdio: 'inherit' });
  }
  return vsix;
}

/** A Python that imports impact_ls: $IMPACT_E2E_PYTHON, the repo's .venv, /work/venv, python3. */
export function impactPython(): string {
  const candidates = [
    process.env.IMPACT_E2E_PYTHON,
    join(REPO_DIR, '.venv', 'bin', 'python'),
    '/work/venv/bin/python',
    'python3',
  ].filter((c): c is string => c !== undefined && c !== '');
  for (const candidate of candidates) {
    if (candidate.includes('/') && !existsSync(candidate)) {
      continue;
    }
    try {
      execFileSync(candidate, ['-c', 'import impact_ls, pygit2'], {
        cwd: REPO_DIR,
        stdio: 'ignore',
      });
      return candidate;
    } catch {
      // try the next one
    }
  }
  throw new Error(
    `no Python can import impact_ls (tried ${candidates.join(', ')}); set IMPACT_E2E_PYTHON`,
  );
}

/** Plant `fixtures/<name>` with its git history into `dest`. */
export function plantFixture(python: string, name: string, dest: string): void {
  execFileSync(
    python,
    [
      '-c',
      'import sys; from pathlib import Path; from impact_ls.history.plant import plant_history; ' +
        'plant_history(Path(sys.argv[1]), Path(sys.argv[2]))',
      join(REPO_DIR, 'fixtures', name),
      dest,
    ],
    { cwd: REPO_DIR, stdio: 'inherit' },
  );
}

/** Write VS Code user settings that keep the workbench quiet and point Impact at `python`. */
export function writeUserSettings(userDataDir: string, python: string): void {
  const user = join(userDataDir, 'User');
  mkdirSync(user, { recursive: true });
  const settings = {
    'impact.interpreter': [python],
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true,
    'update.mode': 'none',
    'editor.codeLens': true,
    'editor.minimap.enabled': false,
    'editor.quickSuggestions': { other: false, comments: false, strings: false },
    'editor.suggestOnTriggerCharacters': false,
    'git.enabled': false,
    'chat.commandCenter.enabled': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    // The DOM renderer puts the terminal's text in the page, where the test can read it.
    'terminal.integrated.gpuAcceleration': 'off',
  };
  writeFileSync(join(user, 'settings.json'), JSON.stringify(settings, null, 2));
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (typeof address === 'object' && address !== null) {
          resolvePort(address.port);
        } else {
          reject(new Error('no port'));
        }
      });
    });
  });
}

export interface CodeServer {
  url: string;
  process: ChildProcess;
  log: () => string;
  stop: () => Promise<void>;
}

/** Install `vsix` into `extensionsDir` with code-server's own CLI. */
export function installExtension(
  entry: string,
  dirs: { user: string; extensions: string },
  vsix: string,
): string {
  const common = ['--user-data-dir', dirs.user, '--extensions-dir', dirs.extensions];
  execFileSync('node', [entry, ...common, '--install-extension', vsix, '--force'], {
    stdio: 'inherit',
  });
  return execFileSync('node', [entry, ...common, '--list-extensions', '--show-versions'], {
    encoding: 'utf8',
  });
}

/** Start code-server on 127.0.0.1 with no auth, and wait until it answers. */
export async function startCodeServer(
  entry: string,
  dirs: { user: string; extensions: string },
  folder: string,
): Promise<CodeServer> {
  const port = await freePort();
  let output = '';
  const child = spawn(
    'node',
    [
      entry,
      '--auth',
      'none',
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--user-data-dir',
      dirs.user,
      '--extensions-dir',
      dirs.extensions,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--ignore-last-opened',
      folder,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      // The server the extension starts inherits this: it must run this checkout's impact_ls,
      // not whatever an editable install elsewhere points at.
      env: {
        ...process.env,
        PORT: '',
        PYTHONPATH: [REPO_DIR, process.env.PYTHONPATH]
          .filter((p) => p !== undefined && p !== '')
          .join(':'),
      },
    },
  );
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`code-server exited with ${child.exitCode}:\n${output}`);
    }
    try {
      const response = await fetch(`${url}/healthz`);
      if (response.ok) {
        break;
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      throw new Error(`code-server did not answer within 60 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    process: child,
    log: () => output,
    stop: async () => {
      if (child.exitCode !== null || child.pid === undefined) {
        return;
      }
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      // Its own process group: the extension host and the language server go with it.
      process.kill(-child.pid, 'SIGTERM');
      const timer = setTimeout(() => {
        if (child.pid !== undefined && child.exitCode === null) {
          process.kill(-child.pid, 'SIGKILL');
        }
      }, 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
