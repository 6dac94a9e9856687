/**
 * The commands: the server's own (`impact.showBlastRadius`, `impact.runAffectedTests`,
 * `impact.reindex`), intercepted on their way to the server so their results are shown, and the
 * client's (`impact.restart`, the view's refresh and open).
 *
 * The language client registers the server's commands itself (from `executeCommandProvider`),
 * so they reach us through the `executeCommand` middleware — from the palette, the editor
 * context menu (first argument: the document's `Uri`) and the server's code lenses alike.
 */

import * as path from 'node:path';
import * as vscode from 'vscode';
import { ExecuteCommandRequest, type Middleware } from 'vscode-languageclient/node';

import {
  type BlastRadiusRefresher,
  type BlastRadiusView,
  OPEN_COMMAND,
  VIEW_ID,
} from './blastRadiusView';
import {
  type TestSelection,
  commandLine,
  outcomeText,
  parseTestOutcome,
  parseTestSelection,
  pytestArgv,
} from './common/affectedTests';
import { type Logger, logError } from './common/logger';
import { DEFAULT_INTERPRETER } from './common/python';
import { affectedTestIds, parseReport } from './common/report';
import type { NodeLocation } from './common/reportTree';
import type { ImpactServer } from './common/server';
import { openLocation, primaryWorkspaceFolder, terminalShellKind } from './common/vscodeapi';
import { AffectedTestResults } from './testResults';

type ExecuteCommand = NonNullable<Middleware['executeCommand']>;
type Next = Parameters<ExecuteCommand>[2];

const TERMINAL_NAME = 'Impact: affected tests';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** The document a command is about: a `Uri` (context menu), `{uri}` (lens) or a URI string. */
function documentArgument(args: readonly unknown[]): string | undefined {
  const first = args[0];
  if (first instanceof vscode.Uri) {
    return first.toString();
  }
  if (isObject(first) && typeof first.uri === 'string') {
    return first.uri;
  }
  return typeof first === 'string' && first.includes(':') ? first : undefined;
}

function isNodeLocation(value: unknown): value is NodeLocation {
  return (
    isObject(value) &&
    typeof value.file === 'string' &&
    typeof value.line === 'number' &&
    typeof value.character === 'number' &&
    typeof value.endLine === 'number' &&
    typeof value.endCharacter === 'number'
  );
}

/** Handles the server's commands and registers the client's. */
export class ImpactCommands {
  private server: ImpactServer | undefined;
  private refresher: BlastRadiusRefresher | undefined;
  private terminal: vscode.Terminal | undefined;
  private readonly results: AffectedTestResults;

  constructor(
    private readonly log: Logger,
    private readonly view: BlastRadiusView,
  ) {
    this.results = new AffectedTestResults((tests, token) =>
      this.runOnServer({ tests, root: undefined }, token).then(() => undefined),
    );
  }

  /** Connect the server and the refresher, which are built after the middleware. */
  attach(server: ImpactServer, refresher: BlastRadiusRefresher): void {
    this.server = server;
    this.refresher = refresher;
  }

  /** The `executeCommand` middleware given to the language client. */
  readonly middleware: ExecuteCommand = async (command, args, next) => {
    try {
      switch (command) {
        case 'impact.showBlastRadius':
          return await this.showBlastRadius(args, next);
        case 'impact.runAffectedTests':
          return await this.runAffectedTests(args, next);
        case 'impact.reindex':
          return await this.reindex(args, next);
        default: {
          const result: unknown = await next(command, args);
          return result;
        }
      }
    } catch (error) {
      logError(this.log, `${command} failed`, error);
      void vscode.window.showErrorMessage(`Impact: ${command} failed; see the Impact output.`);
      return undefined;
    }
  };

  /** Register the client's own commands. */
  register(): { dispose(): unknown }[] {
    return [
      this.results,
      vscode.commands.registerCommand('impact.restart', () => this.server?.restart('requested')),
      vscode.commands.registerCommand('impact.blastRadius.refresh', () =>
        this.refresher?.refresh(),
      ),
      vscode.commands.registerCommand(OPEN_COMMAND, async (location: unknown, baseDir: unknown) => {
        if (isNodeLocation(location) && typeof baseDir === 'string') {
          await openLocation(location, baseDir);
        }
      }),
      vscode.window.onDidCloseTerminal((closed) => {
        if (closed === this.terminal) {
          this.terminal = undefined;
        }
      }),
    ];
  }

  private async showBlastRadius(args: unknown[], next: Next): Promise<unknown> {
    const uri = documentArgument(args);
    const result: unknown = await next(
      'impact.showBlastRadius',
      uri !== undefined ? [{ uri }] : [],
    );
    const report = parseReport(result);
    if (report === undefined) {
      this.log.warn(`impact.showBlastRadius returned ${JSON.stringify(result)}`);
      void vscode.window.showWarningMessage('Impact: the server returned no blast radius.');
      return result;
    }
    this.view.show(report, uri);
    await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
    return result;
  }

  private async selection(args: unknown[], next: Next): Promise<TestSelection | undefined> {
    const given = parseTestSelection(args);
    if (given !== undefined) {
      return given;
    }
    // From the palette or the view: the tests of the workspace's current blast radius.
    const uri = documentArgument(args);
    const report = parseReport(
      await next('impact.showBlastRadius', uri !== undefined ? [{ uri }] : []),
    );
    const tests = report !== undefined ? affectedTestIds(report) : [];
    return tests.length > 0 ? { tests, root: undefined } : undefined;
  }

  private async runAffectedTests(args: unknown[], next: Next): Promise<unknown> {
    const selection = await this.selection(args, next);
    if (selection === undefined) {
      void vscode.window.showInformationMessage(
        'Impact: no tests are affected by the current edits.',
      );
      return { passed: 0, failed: 0, errors: 0 };
    }
    const runner = this.server?.settings.testRunner ?? 'terminal';
    this.log.info(
      `Running ${selection.tests.length} affected tests (${runner}): ${selection.tests.join(' ')}`,
    );
    if (runner === 'terminal') {
      this.runInTerminal(selection);
      return undefined;
    }
    return this.runOnServer(selection);
  }

  private rootDir(selection: TestSelection): string | undefined {
    const folder = primaryWorkspaceFolder()?.uri.fsPath;
    const root = selection.root;
    if (root === undefined || root === '.' || root === '') {
      return folder;
    }
    if (root.startsWith('file:')) {
      return vscode.Uri.parse(root).fsPath;
    }
    return path.isAbsolute(root) || folder === undefined ? root : path.join(folder, root);
  }

  private runInTerminal(selection: TestSelection): void {
    const server = this.server;
    const python = server?.settings.server.python;
    const interpreter =
      python !== undefined && python !== ''
        ? [python]
        : (server?.interpreter?.command ?? [DEFAULT_INTERPRETER]);
    const argv = pytestArgv(interpreter, server?.settings.server.pytestCommand, selection.tests);
    // A fresh terminal per run: the output of one run, in the right folder.
    this.terminal?.dispose();
    const cwd = this.rootDir(selection);
    this.terminal = vscode.window.createTerminal({
      name: TERMINAL_NAME,
      ...(cwd !== undefined ? { cwd } : {}),
    });
    this.terminal.show(true);
    this.terminal.sendText(commandLine(argv, terminalShellKind()), true);
  }

  private async runOnServer(
    selection: TestSelection,
    cancel?: vscode.CancellationToken,
  ): Promise<unknown> {
    const client = this.server?.languageClient;
    if (client === undefined) {
      void vscode.window.showErrorMessage('Impact: the server is not running.');
      return undefined;
    }
    const count = selection.tests.length;
    const result: unknown = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Impact: running ${count} affected test${count === 1 ? '' : 's'}`,
        cancellable: true,
      },
      (_progress, token) => {
        const source = new vscode.CancellationTokenSource();
        token.onCancellationRequested(() => source.cancel());
        cancel?.onCancellationRequested(() => source.cancel());
        return client
          .sendRequest(
            ExecuteCommandRequest.type,
            {
              command: 'impact.runAffectedTests',
              arguments: [
                {
                  tests: selection.tests,
                  ...(selection.root !== undefined ? { root: selection.root } : {}),
                },
              ],
            },
            source.token,
          )
          .finally(() => source.dispose());
      },
    );
    const outcome = parseTestOutcome(result);
    if (outcome === undefined) {
      this.log.warn(`impact.runAffectedTests returned ${JSON.stringify(result)}`);
      return result;
    }
    // The server tells the user the counts itself; the log and Test Results get the details.
    this.log.info(outcomeText(outcome));
    for (const failure of outcome.failures) {
      this.log.info(`${failure.kind} ${failure.test}: ${failure.message}`);
    }
    this.results.show(outcome, selection.tests, this.rootDir(selection) ?? this.view.baseDir());
    return result;
  }

  private async reindex(args: unknown[], next: Next): Promise<unknown> {
    const result: unknown = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'Impact: reindexing' },
      async (): Promise<unknown> => {
        const value: unknown = await next('impact.reindex', args);
        return value;
      },
    );
    this.refresher?.schedule();
    return result;
  }
}
