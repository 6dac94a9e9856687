/**
 * The language status item: `Impact: 3 must · 7 may`, indexing progress, or why the server
 * is not running. It shows beside the Python language indicator and can be pinned.
 */

import * as vscode from 'vscode';

import type { Report } from './report';
import { summaryText } from './report';

export type ServerState =
  | { kind: 'starting'; interpreter: string }
  | { kind: 'indexing'; title: string; percentage: number | undefined; message: string }
  | { kind: 'ready'; report: Report | undefined; scope: string }
  | { kind: 'stopped'; reason: string };

/** Wraps one `LanguageStatusItem` for Python documents. */
export class ImpactStatus implements vscode.Disposable {
  private readonly item: vscode.LanguageStatusItem;
  private interpreter = '';
  private lastReady: ServerState = { kind: 'ready', report: undefined, scope: 'workspace' };

  constructor(id: string, name: string) {
    this.item = vscode.languages.createLanguageStatusItem(id, { language: 'python' });
    this.item.name = name;
    this.set({ kind: 'stopped', reason: 'not started' });
  }

  /** The interpreter line shown in the item's detail. */
  setInterpreter(description: string): void {
    this.interpreter = description;
  }

  /** Indexing ended: show the last summary again. */
  indexingDone(): void {
    this.set(this.lastReady);
  }

  set(state: ServerState): void {
    const item = this.item;
    item.busy = state.kind === 'starting' || state.kind === 'indexing';
    item.severity = vscode.LanguageStatusSeverity.Information;
    item.command = {
      title: 'Show Blast Radius',
      command: 'impact.blastRadius.focus',
    };
    switch (state.kind) {
      case 'starting':
        item.text = 'Impact: starting';
        item.detail = state.interpreter;
        break;
      case 'indexing': {
        const pct = state.percentage !== undefined ? ` ${Math.round(state.percentage)}%` : '…';
        item.text = `Impact: indexing${pct}`;
        item.detail = state.message !== '' ? state.message : state.title;
        break;
      }
      case 'ready': {
        this.lastReady = state;
        const must = state.report?.triage.must_inspect.length ?? 0;
        item.text = state.report !== undefined ? summaryText(state.report) : 'Impact: ready';
        item.severity =
          must > 0
            ? vscode.LanguageStatusSeverity.Warning
            : vscode.LanguageStatusSeverity.Information;
        item.detail = `${state.scope}${this.interpreter !== '' ? ` · ${this.interpreter}` : ''}`;
        break;
      }
      case 'stopped':
        item.text = 'Impact: stopped';
        item.detail = state.reason;
        item.severity = vscode.LanguageStatusSeverity.Error;
        item.command = { title: 'Restart', command: 'impact.restart' };
        break;
    }
  }

  dispose(): void {
    this.item.dispose();
  }
}
