/**
 * The Blast Radius view in the explorer, and what keeps it current.
 *
 * `BlastRadiusView` maps the pure tree of `common/reportTree.ts` onto TreeItems; a click opens
 * the site. `BlastRadiusRefresher` asks the server for the report (`impact.showBlastRadius` via
 * `workspace/executeCommand`) whenever impact diagnostics change, the server sends
 * `impact/reportChanged`, or a server starts; requests are debounced and never overlap.
 */

import * as vscode from 'vscode';
import { ExecuteCommandRequest, type LanguageClient } from 'vscode-languageclient/node';

import { type Logger, logError } from './common/logger';
import { type Report, emptyReport, parseReport, resolveReportPath } from './common/report';
import { type TreeNode, buildTree } from './common/reportTree';
import type { ImpactServer } from './common/server';
import type { ImpactStatus } from './common/status';
import { primaryWorkspaceFolder } from './common/vscodeapi';

export const VIEW_ID = 'impact.blastRadius';
export const OPEN_COMMAND = 'impact.blastRadius.open';
export const REPORT_CHANGED_NOTIFICATION = 'impact/reportChanged';
const DIAGNOSTIC_SOURCE = 'impact';
const REFRESH_DELAY_MS = 300;

// The colours the Problems panel gives the same icons.
const ICON_COLORS: Partial<Record<string, string>> = {
  warning: 'problemsWarningIcon.foreground',
  info: 'problemsInfoIcon.foreground',
};

/** The tree data provider behind `impact.blastRadius`. */
export class BlastRadiusView implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  private nodes: TreeNode[] = [];
  private reportValue: Report = emptyReport();
  private scopeValue: string | undefined;
  private readonly emitter = new vscode.EventEmitter<undefined>();
  private readonly view: vscode.TreeView<TreeNode>;

  readonly onDidChangeTreeData = this.emitter.event;

  constructor(private readonly status: ImpactStatus) {
    this.view = vscode.window.createTreeView(VIEW_ID, {
      treeDataProvider: this,
      showCollapseAll: true,
    });
  }

  /** The report on show. */
  get report(): Report {
    return this.reportValue;
  }

  /** The document URI the report is for, or `undefined` for the whole workspace. */
  get scope(): string | undefined {
    return this.scopeValue;
  }

  /** Show `report` (for the document `scope`, or the workspace). */
  show(report: Report, scope: string | undefined): void {
    this.reportValue = report;
    this.scopeValue = scope;
    this.nodes = buildTree(report);
    const where =
      scope !== undefined ? vscode.workspace.asRelativePath(vscode.Uri.parse(scope)) : 'workspace';
    const must = report.triage.must_inspect.length;
    this.view.description = report.changes.length > 0 ? where : undefined;
    this.view.badge =
      must > 0
        ? { value: must, tooltip: `${must} MUST-INSPECT site${must === 1 ? '' : 's'}` }
        : undefined;
    this.status.set({ kind: 'ready', report, scope: where });
    this.emitter.fire(undefined);
  }

  /** Forget the report (the server stopped). */
  clear(): void {
    this.reportValue = emptyReport();
    this.nodes = [];
    this.view.badge = undefined;
    this.view.description = undefined;
    this.emitter.fire(undefined);
  }

  getChildren(node?: TreeNode): TreeNode[] {
    return node === undefined ? this.nodes : node.children;
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    const state =
      node.expanded === undefined
        ? vscode.TreeItemCollapsibleState.None
        : node.expanded
          ? vscode.TreeItemCollapsibleState.Expanded
          : vscode.TreeItemCollapsibleState.Collapsed;
    const item = new vscode.TreeItem(node.label, state);
    item.id = node.id;
    item.contextValue = node.kind;
    if (node.description !== undefined) {
      item.description = node.description;
    }
    if (node.tooltip !== undefined) {
      item.tooltip = node.tooltip;
    }
    if (node.icon !== undefined) {
      const color = ICON_COLORS[node.icon];
      item.iconPath = new vscode.ThemeIcon(
        node.icon,
        color !== undefined ? new vscode.ThemeColor(color) : undefined,
      );
    }
    if (node.location !== undefined) {
      item.command = {
        title: 'Open',
        command: OPEN_COMMAND,
        arguments: [node.location, this.baseDir()],
      };
    }
    return item;
  }

  /** The folder report paths are relative to. */
  baseDir(): string {
    const folder = primaryWorkspaceFolder()?.uri.fsPath ?? '';
    return resolveReportPath('', this.reportValue.root, folder);
  }

  dispose(): void {
    this.view.dispose();
    this.emitter.dispose();
  }
}

/** Fetch the report for `scope` (a document URI) or the whole workspace. */
export async function fetchReport(
  client: LanguageClient,
  scope: string | undefined,
): Promise<Report | undefined> {
  const result: unknown = await client.sendRequest(ExecuteCommandRequest.type, {
    command: 'impact.showBlastRadius',
    arguments: scope !== undefined ? [{ uri: scope }] : [],
  });
  return parseReport(result);
}

/** Keeps the view in step with the server's analyses. */
export class BlastRadiusRefresher implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private clientDisposables: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private readonly withImpactDiagnostics = new Set<string>();

  constructor(
    private readonly server: ImpactServer,
    private readonly view: BlastRadiusView,
    private readonly log: Logger,
  ) {
    this.disposables.push(
      vscode.languages.onDidChangeDiagnostics((event) => this.diagnosticsChanged(event)),
      server.onDidChangeClient((client) => this.clientChanged(client)),
    );
  }

  /** Refresh soon; several calls within the delay make one request. */
  schedule(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, REFRESH_DELAY_MS);
  }

  /** Refresh now; a call during a request makes one more request after it. */
  refresh(): Promise<void> {
    if (this.running !== undefined) {
      this.again = true;
      return this.running;
    }
    this.running = this.fetch().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.running;
  }

  private async fetch(): Promise<void> {
    const client = this.server.languageClient;
    if (client === undefined) {
      return;
    }
    try {
      const report = await fetchReport(client, this.view.scope);
      if (report !== undefined) {
        this.view.show(report, this.view.scope);
      } else {
        this.log.warn('impact.showBlastRadius returned no report');
      }
    } catch (error) {
      logError(this.log, 'Refreshing the Blast Radius view', error);
    }
  }

  private diagnosticsChanged(event: vscode.DiagnosticChangeEvent): void {
    let relevant = false;
    for (const uri of event.uris) {
      const key = uri.toString();
      const has = vscode.languages
        .getDiagnostics(uri)
        .some((diagnostic) => diagnostic.source === DIAGNOSTIC_SOURCE);
      if (has || this.withImpactDiagnostics.has(key)) {
        relevant = true;
      }
      if (has) {
        this.withImpactDiagnostics.add(key);
      } else {
        this.withImpactDiagnostics.delete(key);
      }
    }
    if (relevant) {
      this.schedule();
    }
  }

  private clientChanged(client: LanguageClient | undefined): void {
    for (const disposable of this.clientDisposables.splice(0)) {
      disposable.dispose();
    }
    if (client === undefined) {
      this.view.clear();
      return;
    }
    this.clientDisposables.push(
      client.onNotification(REPORT_CHANGED_NOTIFICATION, () => this.schedule()),
    );
    this.schedule();
  }

  dispose(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
    }
    for (const disposable of [...this.disposables, ...this.clientDisposables]) {
      disposable.dispose();
    }
  }
}
