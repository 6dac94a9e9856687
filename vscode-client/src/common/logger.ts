/**
 * The `Impact` LogOutputChannel: the extension's log, the language client's output and traces.
 *
 * VS Code filters it by the level the user picks (`Developer: Set Log Level…`), so everything is
 * logged at its true level and nothing is dropped here.
 */

import * as vscode from 'vscode';

export type Logger = vscode.LogOutputChannel;

/** Create the channel named after the server (`Impact`). */
export function createLogger(name: string): Logger {
  return vscode.window.createOutputChannel(name, { log: true });
}

/** Log an error with its stack, if it has one. */
export function logError(log: Logger, message: string, error: unknown): void {
  if (error instanceof Error) {
    log.error(`${message}: ${error.message}`);
    if (error.stack !== undefined) {
      log.debug(error.stack);
    }
  } else {
    log.error(`${message}: ${String(error)}`);
  }
}
