/**
 * Thin wrappers over `vscode.*`: configuration as a `ConfigSource`, the Python extension as a
 * `PythonEnvironmentProvider`, LSP-shaped locations as VS Code objects, and the few window calls
 * the rest of the extension makes. Keeping them here keeps the other modules easy to read.
 */

import * as os from 'node:os';
import * as vscode from 'vscode';

import type { NodeLocation } from './reportTree';
import type { PeekArguments } from './locations';
import type { PythonEnvironmentProvider } from './python';
import type { ConfigSource, VariableContext } from './settings';
import type { Logger } from './logger';

export const PYTHON_EXTENSION_ID = 'ms-python.python';

/** `impact.*` settings of `scope`, reporting only values the user set at some level. */
export function configSource(scope: vscode.ConfigurationScope | undefined): ConfigSource {
  const config = vscode.workspace.getConfiguration('impact', scope);
  return {
    get(key: string): unknown {
      const inspected = config.inspect(key);
      if (inspected === undefined) {
        return undefined;
      }
      return (
        inspected.workspaceFolderLanguageValue ??
        inspected.workspaceFolderValue ??
        inspected.workspaceLanguageValue ??
        inspected.workspaceValue ??
        inspected.globalLanguageValue ??
        inspected.globalValue
      );
    },
  };
}

/** What `${workspaceFolder}` and friends mean for `folder`. */
export function variableContext(folder: vscode.WorkspaceFolder | undefined): VariableContext {
  return {
    ...(folder !== undefined ? { workspaceFolder: folder.uri.fsPath } : {}),
    userHome: os.homedir(),
    env: process.env,
  };
}

/** The workspace folder the server is rooted at: the first one, if any. */
export function primaryWorkspaceFolder(): vscode.WorkspaceFolder | undefined {
  return vscode.workspace.workspaceFolders?.[0];
}

// The subset of the Python extension's API (`@vscode/python-extension`) that we use.
interface EnvironmentPath {
  id: string;
  path: string;
}
interface ResolvedEnvironment {
  executable: { uri?: vscode.Uri };
}
interface PythonEnvironmentsApi {
  getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
  resolveEnvironment(env: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
  onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
}
interface PythonExtensionApi {
  environments: PythonEnvironmentsApi;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isPythonExtensionApi(value: unknown): value is PythonExtensionApi {
  if (!isObject(value) || !isObject(value.environments)) {
    return false;
  }
  const envs = value.environments;
  return (
    typeof envs.getActiveEnvironmentPath === 'function' &&
    typeof envs.resolveEnvironment === 'function' &&
    typeof envs.onDidChangeActiveEnvironmentPath === 'function'
  );
}

async function pythonExtensionApi(log: Logger): Promise<PythonExtensionApi | undefined> {
  const extension = vscode.extensions.getExtension(PYTHON_EXTENSION_ID);
  if (extension === undefined) {
    return undefined;
  }
  try {
    const exports: unknown = extension.isActive ? extension.exports : await extension.activate();
    if (isPythonExtensionApi(exports)) {
      return exports;
    }
    log.warn('The Python extension is installed but exposes no environments API; using python3');
  } catch (error) {
    log.warn(`The Python extension failed to activate: ${String(error)}`);
  }
  return undefined;
}

/** The Python extension as an interpreter provider, or `undefined` when it is not installed. */
export function pythonEnvironmentProvider(log: Logger): PythonEnvironmentProvider | undefined {
  if (vscode.extensions.getExtension(PYTHON_EXTENSION_ID) === undefined) {
    return undefined;
  }
  return {
    async activeInterpreter(resource: string | undefined): Promise<string | undefined> {
      const api = await pythonExtensionApi(log);
      if (api === undefined) {
        return undefined;
      }
      const envPath = api.environments.getActiveEnvironmentPath(
        resource !== undefined ? vscode.Uri.parse(resource) : undefined,
      );
      const resolved = await api.environments.resolveEnvironment(envPath);
      return resolved?.executable.uri?.fsPath;
    },
  };
}

/** Call `listener` when the Python extension's active environment changes. */
export async function onDidChangePythonInterpreter(
  log: Logger,
  listener: () => void,
): Promise<vscode.Disposable | undefined> {
  const api = await pythonExtensionApi(log);
  return api?.environments.onDidChangeActiveEnvironmentPath(() => listener());
}

/** `editor.action.showReferences` arguments as VS Code objects. */
export function toShowReferencesArguments(
  peek: PeekArguments,
): [vscode.Uri, vscode.Position, vscode.Location[]] {
  const position = (p: { line: number; character: number }): vscode.Position =>
    new vscode.Position(p.line, p.character);
  return [
    vscode.Uri.parse(peek.uri),
    position(peek.position),
    peek.locations.map(
      (loc) =>
        new vscode.Location(
          vscode.Uri.parse(loc.uri),
          new vscode.Range(position(loc.range.start), position(loc.range.end)),
        ),
    ),
  ];
}

/** Open a report location (one-based lines) in an editor and select it. */
export async function openLocation(location: NodeLocation, baseDir: string): Promise<void> {
  const file =
    location.file.startsWith('/') || /^[A-Za-z]:[\\/]/.test(location.file)
      ? location.file
      : `${baseDir.replace(/[\\/]+$/, '')}/${location.file}`;
  const uri = vscode.Uri.file(file);
  const document = await vscode.workspace.openTextDocument(uri);
  let range = new vscode.Range(
    Math.max(location.line - 1, 0),
    location.character,
    Math.max(location.endLine - 1, 0),
    location.endCharacter,
  );
  if (location.findText !== undefined) {
    const offset = document.getText().indexOf(location.findText);
    if (offset >= 0) {
      const start = document.positionAt(offset + location.findText.indexOf(' ') + 1);
      range = new vscode.Range(start, start);
    }
  }
  await vscode.window.showTextDocument(document, { selection: range, preview: true });
}

/** Which quoting the integrated terminal's default shell needs. */
export function terminalShellKind(): 'posix' | 'powershell' | 'cmd' {
  const shell = vscode.env.shell.toLowerCase();
  if (shell.includes('pwsh') || shell.includes('powershell')) {
    return 'powershell';
  }
  return shell.endsWith('cmd.exe') ? 'cmd' : 'posix';
}

/** Set a `when`-clause context key. */
export async function setContext(key: string, value: unknown): Promise<void> {
  await vscode.commands.executeCommand('setContext', key, value);
}
