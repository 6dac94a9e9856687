/**
 * Entry point: wires the logger, status item, Blast Radius view and its graph, commands and the
 * server manager together, then starts `<interpreter> -m impact_ls serve`.
 */

import * as vscode from 'vscode';

import { BlastRadiusRefresher, BlastRadiusView } from './blastRadiusView';
import { ImpactCommands } from './commands';
import { createLogger } from './common/logger';
import { ImpactServer, loadServerInfo } from './common/server';
import { ImpactStatus } from './common/status';
import { onDidChangePythonInterpreter } from './common/vscodeapi';
import { GraphView, SHOW_GRAPH_COMMAND } from './graphView';

let server: ImpactServer | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const serverInfo = loadServerInfo(context.extension.packageJSON);
  const log = createLogger(serverInfo.name);
  const status = new ImpactStatus(`${serverInfo.id}.status`, serverInfo.name);
  const view = new BlastRadiusView(status);
  const commands = new ImpactCommands(log, view);
  const impactServer = new ImpactServer({
    serverInfo,
    log,
    status,
    executeCommand: commands.middleware,
  });
  server = impactServer;
  const refresher = new BlastRadiusRefresher(impactServer, view, log);
  commands.attach(impactServer, refresher);
  const graph = new GraphView(impactServer, () => view.scope, log);

  context.subscriptions.push(
    log,
    status,
    view,
    refresher,
    ...commands.register(),
    graph,
    vscode.commands.registerCommand(SHOW_GRAPH_COMMAND, () => graph.show()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('impact')) {
        void impactServer.settingsChanged();
      }
    }),
    // Added and removed folders reach the server as workspace/didChangeWorkspaceFolders
    // through the language client; no restart needed.
  );
  const pythonListener = await onDidChangePythonInterpreter(log, () => {
    void impactServer.pythonEnvironmentChanged();
  });
  if (pythonListener !== undefined) {
    context.subscriptions.push(pythonListener);
  }
  void impactServer.restart('activation');
}

export async function deactivate(): Promise<void> {
  await server?.dispose();
  server = undefined;
}
