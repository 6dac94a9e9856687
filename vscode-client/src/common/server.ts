/**
 * Start, stop and (serialized) restart of `<interpreter> -m impact_ls serve` over stdio.
 *
 * Every start re-reads the settings, resolves the interpreter, and checks that impact_ls is
 * importable there before launching; when it is not, the user gets one notification that offers
 * the fix. Restarts are queued so two never overlap, and a burst of requests collapses into one.
 * Only a change of interpreter restarts the server; other settings are forwarded live through
 * `workspace/didChangeConfiguration`.
 */

import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  type LanguageClientOptions,
  type Middleware,
  RevealOutputChannelOn,
  type ServerOptions,
  State,
  WorkDoneProgress,
  WorkDoneProgressCreateRequest,
} from 'vscode-languageclient/node';

import { type Logger, logError } from './logger';
import { parsePeekArguments } from './locations';
import {
  type ResolvedInterpreter,
  PIP_INSTALL_TIMEOUT_MS,
  checkImpactLs,
  describeInterpreter,
  execFileRunner,
  notInstalledMessage,
  pipInstallCommand,
  resolveInterpreter,
  serverCommand,
} from './python';
import {
  type ISettings,
  DEFAULT_SETTINGS,
  didChangeConfigurationParams,
  initializationOptions,
  needsRestart,
  readSettings,
} from './settings';
import type { ImpactStatus } from './status';
import {
  configSource,
  primaryWorkspaceFolder,
  pythonEnvironmentProvider,
  setContext,
  toShowReferencesArguments,
  variableContext,
} from './vscodeapi';

export interface ServerInfo {
  id: string;
  name: string;
}

/** Context key that is true while the server runs; menus and the welcome view use it. */
export const RUNNING_CONTEXT_KEY = 'impact.serverRunning';

/** Read `serverInfo` from package.json; both fields must be non-empty strings. */
export function loadServerInfo(packageJSON: unknown): ServerInfo {
  if (typeof packageJSON === 'object' && packageJSON !== null && 'serverInfo' in packageJSON) {
    const info: unknown = packageJSON.serverInfo;
    if (typeof info === 'object' && info !== null && 'id' in info && 'name' in info) {
      const { id, name } = info;
      if (typeof id === 'string' && id !== '' && typeof name === 'string' && name !== '') {
        return { id, name };
      }
    }
  }
  throw new Error('package.json has no serverInfo {id, name}');
}

export interface ServerDeps {
  serverInfo: ServerInfo;
  log: Logger;
  status: ImpactStatus;
  /** Intercepts the server's commands (`impact.showBlastRadius`, …) to show their results. */
  executeCommand: NonNullable<Middleware['executeCommand']>;
}

/** Owns the language client; all starts and stops go through its queue. */
export class ImpactServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private resolved: ResolvedInterpreter | undefined;
  private settingsValue: ISettings = DEFAULT_SETTINGS;
  private queue: Promise<void> = Promise.resolve();
  private restartQueued = false;
  private disposed = false;
  private readonly clientDisposables: { dispose(): unknown }[] = [];
  private readonly changed = new vscode.EventEmitter<LanguageClient | undefined>();

  /** Fires with the new client after a start, and with `undefined` when the server stops. */
  readonly onDidChangeClient = this.changed.event;

  constructor(private readonly deps: ServerDeps) {}

  /** The running client, if any. */
  get languageClient(): LanguageClient | undefined {
    return this.client?.isRunning() === true ? this.client : undefined;
  }

  /** The interpreter of the current (or last) start. */
  get interpreter(): ResolvedInterpreter | undefined {
    return this.resolved;
  }

  get settings(): ISettings {
    return this.settingsValue;
  }

  /** Queue a stop and a start; requests made while one is still queued share it. */
  restart(reason: string): Promise<void> {
    if (this.restartQueued) {
      return this.queue;
    }
    this.restartQueued = true;
    this.queue = this.queue
      .then(async () => {
        this.restartQueued = false;
        await this.stopNow();
        if (!this.disposed) {
          await this.startNow(reason);
        }
      })
      .catch((error: unknown) => logError(this.deps.log, 'Impact server restart failed', error));
    return this.queue;
  }

  /** Queue a stop. */
  stop(): Promise<void> {
    this.queue = this.queue
      .then(() => this.stopNow())
      .catch((error: unknown) => logError(this.deps.log, 'Impact server stop failed', error));
    return this.queue;
  }

  /** Re-read the settings: restart for a new interpreter, forward everything else. */
  async settingsChanged(): Promise<void> {
    const next = this.readSettings();
    const client = this.languageClient;
    if (client === undefined || needsRestart(this.settingsValue, next)) {
      await this.restart('settings changed');
      return;
    }
    this.settingsValue = next;
    const params = didChangeConfigurationParams(next, this.pythonForServer());
    this.deps.log.info(`Forwarding settings: ${JSON.stringify(params.settings.impact)}`);
    await client.sendNotification(DidChangeConfigurationNotification.type, params);
  }

  /** Restart when the Python extension's environment changes and no interpreter is set. */
  async pythonEnvironmentChanged(): Promise<void> {
    if (this.settingsValue.interpreter.length === 0) {
      await this.restart('the Python environment changed');
    }
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await this.stop();
    this.changed.dispose();
  }

  private readSettings(): ISettings {
    const folder = primaryWorkspaceFolder();
    const { settings, warnings } = readSettings(configSource(folder?.uri), variableContext(folder));
    if (warnings.length > 0) {
      for (const warning of warnings) {
        this.deps.log.warn(warning);
      }
      void vscode.window
        .showWarningMessage(
          `Impact: ${warnings.length} setting${warnings.length === 1 ? ' is' : 's are'} invalid and use the default: ${warnings[0] ?? ''}`,
          'Open Settings',
        )
        .then((choice) => {
          if (choice === 'Open Settings') {
            void vscode.commands.executeCommand('workbench.action.openSettings', 'impact.');
          }
        });
    }
    return settings;
  }

  private pythonForServer(): string | undefined {
    const command = this.resolved?.command;
    return command !== undefined && command.length === 1 ? command[0] : undefined;
  }

  private async startNow(reason: string): Promise<void> {
    const { log, status, serverInfo } = this.deps;
    const folder = primaryWorkspaceFolder();
    this.settingsValue = this.readSettings();
    const interpreter = await resolveInterpreter(
      this.settingsValue.interpreter,
      pythonEnvironmentProvider(log),
      folder?.uri.toString(),
      log,
    );
    this.resolved = interpreter;
    const described = describeInterpreter(interpreter);
    status.setInterpreter(interpreter.command.join(' '));
    status.set({ kind: 'starting', interpreter: described });
    log.info(`Starting ${serverInfo.name} server (${reason}) with ${described}`);

    const check = await checkImpactLs(interpreter, execFileRunner, folder?.uri.fsPath);
    if (!check.ok) {
      log.error(check.detail);
      status.set({ kind: 'stopped', reason: check.detail });
      await setContext(RUNNING_CONTEXT_KEY, false);
      void this.offerFix(interpreter, check.reason, check.detail, check.executable);
      return;
    }
    log.info(`impact_ls ${check.version} found`);

    const { command, args } = serverCommand(interpreter);
    const serverOptions: ServerOptions = {
      command,
      args,
      // No `transport`: with TransportKind.stdio the client appends `--stdio`, which
      // `impact-ls serve` rejects; an Executable without one talks over stdio anyway.
      options: {
        ...(folder !== undefined ? { cwd: folder.uri.fsPath } : {}),
        env: { ...process.env, PYTHONUNBUFFERED: '1', PYTHONIOENCODING: 'utf-8' },
      },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'python' },
        { scheme: 'untitled', language: 'python' },
      ],
      outputChannel: log,
      traceOutputChannel: log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: initializationOptions(this.settingsValue, this.pythonForServer()),
      synchronize: {
        fileEvents: [
          vscode.workspace.createFileSystemWatcher('**/*.py'),
          vscode.workspace.createFileSystemWatcher('**/pyproject.toml'),
          vscode.workspace.createFileSystemWatcher('**/.git/HEAD'),
        ],
      },
      middleware: this.middleware(),
    };
    const client = new LanguageClient(serverInfo.id, serverInfo.name, serverOptions, clientOptions);
    this.client = client;
    this.clientDisposables.push(
      client.onDidChangeState((event) => {
        if (event.newState === State.Stopped) {
          status.set({ kind: 'stopped', reason: 'the server stopped; see the Impact output' });
          void setContext(RUNNING_CONTEXT_KEY, false);
          this.changed.fire(undefined);
        }
      }),
    );
    try {
      await client.start();
    } catch (error) {
      logError(log, `${serverInfo.name} server failed to start`, error);
      status.set({ kind: 'stopped', reason: 'failed to start; see the Impact output' });
      await setContext(RUNNING_CONTEXT_KEY, false);
      return;
    }
    this.trackProgress(client);
    status.set({ kind: 'ready', report: undefined, scope: 'workspace' });
    await setContext(RUNNING_CONTEXT_KEY, true);
    this.changed.fire(client);
    log.info(`${serverInfo.name} server is running`);
  }

  private async stopNow(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    for (const disposable of this.clientDisposables.splice(0)) {
      disposable.dispose();
    }
    if (client === undefined) {
      return;
    }
    await setContext(RUNNING_CONTEXT_KEY, false);
    this.changed.fire(undefined);
    try {
      if (client.isRunning()) {
        await client.stop(2000);
      }
      await client.dispose(2000);
    } catch (error) {
      logError(this.deps.log, 'Stopping the server', error);
    }
  }

  /** Batch lenses carry LSP-shaped locations; VS Code's references peek needs its own types. */
  private middleware(): Middleware {
    const convert = (lens: vscode.CodeLens): vscode.CodeLens => {
      const peek = parsePeekArguments(lens.command?.arguments);
      if (lens.command !== undefined && peek !== undefined) {
        lens.command = {
          title: lens.command.title,
          ...(lens.command.tooltip !== undefined ? { tooltip: lens.command.tooltip } : {}),
          command: 'editor.action.showReferences',
          arguments: toShowReferencesArguments(peek),
        };
      }
      return lens;
    };
    return {
      executeCommand: this.deps.executeCommand,
      provideCodeLenses: async (document, token, next) => {
        const lenses = await next(document, token);
        return lenses?.map(convert);
      },
      resolveCodeLens: async (lens, token, next) => {
        const resolved = await next(lens, token);
        return resolved !== undefined && resolved !== null ? convert(resolved) : resolved;
      },
      workspace: {
        // A server that pulls its settings gets the same values as initializationOptions.
        configuration: async (params, token, next) => {
          const result = await next(params, token);
          if (!Array.isArray(result)) {
            return result;
          }
          const ours = initializationOptions(this.settingsValue, this.pythonForServer());
          return params.items.map((item, index): unknown =>
            item.section === 'impact' ? ours : result[index],
          );
        },
      },
    };
  }

  /**
   * Mirror the server's work-done progress (indexing) in the status item and the window.
   *
   * Replaces the client's default handler of `window/workDoneProgress/create`, which would only
   * show a notification; this shows the same progress in the status bar and the status item.
   */
  private trackProgress(client: LanguageClient): void {
    const { status } = this.deps;
    this.clientDisposables.push(
      client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
        let finish: () => void = () => undefined;
        let title = 'Impact';
        let report: vscode.Progress<{ message?: string; increment?: number }> | undefined;
        let reported = 0;
        const done = new Promise<void>((resolve) => {
          finish = resolve;
        });
        void vscode.window.withProgress(
          { location: vscode.ProgressLocation.Window, title: 'Impact' },
          (progress) => {
            report = progress;
            return done;
          },
        );
        const listener = client.onProgress(WorkDoneProgress.type, token, (value) => {
          if (value.kind === 'end') {
            listener.dispose();
            finish();
            status.indexingDone();
            return;
          }
          if (value.kind === 'begin') {
            title = value.title;
          }
          const percentage = value.percentage;
          const message = value.message ?? '';
          if (percentage !== undefined && percentage > reported) {
            report?.report({
              message: `${title} ${message}`.trim(),
              increment: percentage - reported,
            });
            reported = percentage;
          } else {
            report?.report({ message: `${title} ${message}`.trim() });
          }
          status.set({ kind: 'indexing', title, percentage, message });
        });
        this.clientDisposables.push(listener, { dispose: finish });
      }),
    );
  }

  private async offerFix(
    interpreter: ResolvedInterpreter,
    reason: 'interpreter-missing' | 'not-installed' | 'failed',
    detail: string,
    executable: string | undefined,
  ): Promise<void> {
    const install = 'Install impact-ls';
    const select = 'Select Interpreter';
    const settings = 'Open Settings';
    const output = 'Show Output';
    const python = vscode.extensions.getExtension('ms-python.python') !== undefined;
    const actions =
      reason === 'not-installed'
        ? [install, ...(python ? [select] : []), settings]
        : reason === 'interpreter-missing'
          ? [...(python ? [select] : []), settings]
          : [output, settings];
    const message =
      reason === 'not-installed'
        ? notInstalledMessage(interpreter, executable)
        : `Impact: ${detail}.`;
    const choice = await vscode.window.showErrorMessage(message, ...actions);
    if (choice === install) {
      await this.pipInstall(interpreter);
    } else if (choice === select) {
      await vscode.commands.executeCommand('python.setInterpreter');
    } else if (choice === settings) {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'impact.interpreter');
    } else if (choice === output) {
      this.deps.log.show();
    }
  }

  private async pipInstall(interpreter: ResolvedInterpreter): Promise<void> {
    const { log } = this.deps;
    const { command, args } = pipInstallCommand(interpreter);
    log.info(`Running ${[command, ...args].join(' ')}`);
    const result = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Installing impact-ls into ${interpreter.command.join(' ')}`,
      },
      () => execFileRunner.run(command, args, { timeoutMs: PIP_INSTALL_TIMEOUT_MS }),
    );
    log.info(result.stdout);
    if (result.code === 0) {
      await this.restart('impact-ls was installed');
      return;
    }
    log.error(result.stderr);
    const lastLine = result.stderr.trim().split(/\r?\n/).pop() ?? result.error ?? '';
    const choice = await vscode.window.showErrorMessage(
      `Impact: pip install impact-ls failed: ${lastLine}`,
      'Show Output',
    );
    if (choice === 'Show Output') {
      log.show();
    }
  }
}
