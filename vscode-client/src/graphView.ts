/**
 * "Show as graph": the Blast Radius as the HTML page of `impact-ls analyze --format html`, in a
 * webview beside the editor. The server renders the page (`impact.renderBlastRadius`) for the
 * view's current scope; a click on a node or a `file:line` link opens that location.
 */

import * as vscode from 'vscode';
import { ExecuteCommandRequest } from 'vscode-languageclient/node';

import { parseGraphPage, parseOpenRequest } from './common/graphPage';
import { type Logger, logError } from './common/logger';
import type { ImpactServer } from './common/server';

export const SHOW_GRAPH_COMMAND = 'impact.blastRadius.showGraph';
const PANEL_TYPE = 'impact.blastRadiusGraph';

/** Owns the one graph panel; showing again refreshes it. */
export class GraphView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private root = '';

  constructor(
    private readonly server: ImpactServer,
    private readonly scope: () => string | undefined,
    private readonly log: Logger,
  ) {}

  /** Render the current blast radius and show it. */
  async show(): Promise<void> {
    const client = this.server.languageClient;
    if (client === undefined) {
      void vscode.window.showWarningMessage('Impact: the server is not running.');
      return;
    }
    const scope = this.scope();
    let result: unknown;
    try {
      result = await client.sendRequest(ExecuteCommandRequest.type, {
        command: 'impact.renderBlastRadius',
        arguments: scope !== undefined ? [{ uri: scope }] : [],
      });
    } catch (error) {
      logError(this.log, 'impact.renderBlastRadius', error);
      void vscode.window.showErrorMessage('Impact: could not draw the blast radius.');
      return;
    }
    const page = parseGraphPage(result);
    if (page === undefined) {
      this.log.warn(`impact.renderBlastRadius returned ${JSON.stringify(result)}`);
      return;
    }
    this.root = page.root;
    const panel = this.panel ?? this.createPanel();
    panel.webview.html = page.html;
    panel.reveal(vscode.ViewColumn.Beside);
  }

  private createPanel(): vscode.WebviewPanel {
    // No local resources: the page is self-contained and fetches nothing.
    const panel = vscode.window.createWebviewPanel(
      PANEL_TYPE,
      'Blast Radius',
      vscode.ViewColumn.Beside,
      { enableScripts: true, localResourceRoots: [] },
    );
    panel.webview.onDidReceiveMessage((message: unknown) => this.open(message));
    panel.onDidDispose(() => {
      this.panel = undefined;
    });
    this.panel = panel;
    return panel;
  }

  private async open(message: unknown): Promise<void> {
    const request = parseOpenRequest(message, this.root);
    if (request === undefined) {
      return;
    }
    const position = new vscode.Position(request.line - 1, 0);
    await vscode.window.showTextDocument(vscode.Uri.file(request.file), {
      selection: new vscode.Range(position, position),
      viewColumn: vscode.ViewColumn.One,
    });
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
