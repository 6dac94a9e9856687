/**
 * Server-run affected tests in VS Code's Test Results: one TestRun per run, one item per test,
 * failures with pytest's message at the failing line. Items can be re-run from the Testing view
 * with the "Run with Impact" profile, which goes back through the server.
 */

import * as path from 'node:path';
import * as vscode from 'vscode';

import { type TestOutcome, type TestVerdict, testVerdicts } from './common/affectedTests';

export const CONTROLLER_ID = 'impact.affectedTests';

function fileOf(baseDir: string, file: string): vscode.Uri {
  return vscode.Uri.file(path.isAbsolute(file) ? file : path.join(baseDir, file));
}

/** Owns the `Impact: affected tests` TestController. */
export class AffectedTestResults implements vscode.Disposable {
  private readonly controller: vscode.TestController;

  /** `rerun` runs the given test ids through the server and reports them here again. */
  constructor(rerun: (tests: string[], token: vscode.CancellationToken) => Promise<void>) {
    this.controller = vscode.tests.createTestController(CONTROLLER_ID, 'Impact: affected tests');
    this.controller.createRunProfile(
      'Run with Impact',
      vscode.TestRunProfileKind.Run,
      async (request, token) => {
        const items: vscode.TestItem[] = [];
        if (request.include !== undefined) {
          items.push(...request.include);
        } else {
          this.controller.items.forEach((item) => items.push(item));
        }
        const excluded = new Set((request.exclude ?? []).map((item) => item.id));
        await rerun(
          items.map((item) => item.id).filter((id) => !excluded.has(id)),
          token,
        );
      },
      true,
    );
  }

  /** Show a finished server run; `baseDir` is the folder test ids are relative to. */
  show(outcome: TestOutcome, selection: readonly string[], baseDir: string): void {
    const verdicts = testVerdicts(outcome, selection);
    const items = verdicts.map((verdict) => this.item(verdict, baseDir));
    this.controller.items.replace(items);
    const run = this.controller.createTestRun(
      new vscode.TestRunRequest(items),
      `Impact: ${verdicts.length} affected tests`,
      false,
    );
    verdicts.forEach((verdict, index) => {
      const item = items[index];
      if (item === undefined) {
        return;
      }
      run.enqueued(item);
      this.record(run, item, verdict, baseDir);
    });
    if (outcome.message !== '') {
      run.appendOutput(`${outcome.message.replace(/\r?\n/g, '\r\n')}\r\n`);
    }
    run.end();
  }

  private item(verdict: TestVerdict, baseDir: string): vscode.TestItem {
    const file = verdict.test.split('::')[0] ?? verdict.test;
    const item = this.controller.createTestItem(verdict.test, verdict.test, fileOf(baseDir, file));
    if (verdict.failure?.line !== undefined && verdict.failure.file === file) {
      const line = verdict.failure.line - 1;
      item.range = new vscode.Range(line, 0, line, 0);
    }
    return item;
  }

  private record(
    run: vscode.TestRun,
    item: vscode.TestItem,
    verdict: TestVerdict,
    baseDir: string,
  ): void {
    const message = (): vscode.TestMessage => {
      const failure = verdict.failure;
      const text = new vscode.TestMessage(
        failure?.message !== '' ? (failure?.message ?? '') : verdict.state,
      );
      if (failure !== undefined && failure.file !== '') {
        const line = Math.max((failure.line ?? 1) - 1, 0);
        text.location = new vscode.Location(
          fileOf(baseDir, failure.file),
          new vscode.Position(line, 0),
        );
      }
      return text;
    };
    switch (verdict.state) {
      case 'passed':
        run.passed(item);
        break;
      case 'failed':
        run.failed(item, message());
        break;
      case 'errored':
        run.errored(item, message());
        break;
      case 'skipped':
        run.skipped(item);
        break;
      case 'unknown':
        // The counts do not say; leave it enqueued rather than claim a result.
        break;
    }
  }

  dispose(): void {
    this.controller.dispose();
  }
}
