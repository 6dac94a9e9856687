/**
 * The extension in a real VS Code: code-server 4.100.3 (VS Code 1.100.3) driven in Debian's
 * Chromium through playwright-core.
 *
 * Installs the built .vsix, opens `fixtures/vscode_demo` planted with its git history in a
 * 1,400 px wide window, adds a required parameter to `LoginService.login`, and checks what a user
 * would see: the lenses above the definition (the tests lens among them, whole), the MUST-INSPECT
 * warnings in the Problems panel leading with what broke, the Blast Radius view in the same
 * severity icons as Problems, no `.impact_ls` folder in the Explorer, the references peek of the
 * batch lens, the graph webview, and the not-installed notification naming the interpreter's path
 * and the fix.
 * Screenshots go to `.test-artifacts/vscode-e2e/` (git-ignored).
 *
 * Opt-in (`IMPACT_E2E_VSCODE=1 scripts/ci.sh`, or `npm run test:e2e`): it needs apt packages,
 * a code-server build and a browser.
 */

import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { type Browser, type Page, chromium } from 'playwright-core';

import {
  ARTIFACTS_DIR,
  type CodeServer,
  builtVsix,
  impactPython,
  installCodeServer,
  installExtension,
  plantFixture,
  startCodeServer,
  writeUserSettings,
} from './codeServer';

const CHROMIUM = process.env.IMPACT_E2E_CHROMIUM ?? '/usr/bin/chromium';
const STEP_TIMEOUT = 90_000;
// The width at which the lens row used to end before "Run N affected tests".
const WINDOW_WIDTH = 1400;

describe('the Impact extension in VS Code (code-server)', { timeout: 15 * 60_000 }, () => {
  let tmp = '';
  let workspace = '';
  let codeServer: CodeServer | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let python = '';
  let pageOpened = false;

  async function shot(name: string): Promise<string> {
    const file = join(ARTIFACTS_DIR, `${name}.png`);
    await page.screenshot({ path: file });
    return file;
  }

  async function runCommand(title: string): Promise<void> {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`>${title}`);
    const entry = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    await entry.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
    await page.keyboard.press('Enter');
  }

  /** Write the workspace's .vscode/settings.json, as a user editing it would. */
  function workspaceSettings(impact: Record<string, unknown>): void {
    mkdirSync(join(workspace, '.vscode'), { recursive: true });
    const entries = Object.entries(impact).map(([key, value]) => [`impact.${key}`, value]);
    writeFileSync(
      join(workspace, '.vscode', 'settings.json'),
      JSON.stringify(Object.fromEntries(entries), null, 2),
    );
  }

  /** Where ``locator`` is on screen once it is: lenses are redrawn as analyses land, so an
   * element found a moment ago may be between two renderings (no box) when it is measured. */
  async function boxOf(
    locator: ReturnType<Page['locator']>,
  ): Promise<{ x: number; y: number; width: number; height: number } | null> {
    const deadline = Date.now() + STEP_TIMEOUT;
    for (;;) {
      await locator.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
      const box = await locator.boundingBox();
      if (box !== null || Date.now() > deadline) return box;
    }
  }

  async function expectNoLens(editor: ReturnType<Page['locator']>): Promise<void> {
    await editor
      .locator('.codelens-decoration', { hasText: /Blast radius/ })
      .first()
      .waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
  }

  before(async () => {
    mkdirSync(ARTIFACTS_DIR, { recursive: true });
    const entry = installCodeServer();
    const vsix = builtVsix();
    python = impactPython();
    tmp = mkdtempSync(join(tmpdir(), 'impact-vscode-e2e-'));
    workspace = join(tmp, 'vscode_demo');
    plantFixture(python, 'vscode_demo', workspace);
    const dirs = { user: join(tmp, 'user-data'), extensions: join(tmp, 'extensions') };
    writeUserSettings(dirs.user, python);
    const installed = installExtension(entry, dirs, vsix);
    assert.match(installed, /^impact-ls\.impact-ls@\d+\.\d+\.\d+$/m);

    codeServer = await startCodeServer(entry, dirs, workspace);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    const context = await browser.newContext({
      viewport: { width: WINDOW_WIDTH, height: 1000 },
    });
    page = await context.newPage();
    pageOpened = true;
    await page.goto(`${codeServer.url}/?folder=${encodeURIComponent(workspace)}`);
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
    // The explorer shows the fixture once the workbench is up.
    await page
      .locator('.explorer-folders-view .monaco-list-row', { hasText: 'pkg' })
      .first()
      .waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  });

  after(async () => {
    if (pageOpened) {
      await shot('last').catch(() => undefined);
    }
    await browser?.close();
    if (codeServer !== undefined) {
      writeFileSync(join(ARTIFACTS_DIR, 'code-server.log'), codeServer.log());
      await codeServer.stop();
    }
    // The extension host's logs, the Impact output channel among them.
    const logs = join(tmp, 'user-data', 'logs');
    if (tmp !== '' && existsSync(logs)) {
      rmSync(join(ARTIFACTS_DIR, 'logs'), { recursive: true, force: true });
      cpSync(logs, join(ARTIFACTS_DIR, 'logs'), { recursive: true });
    }
    if (tmp !== '' && process.env.IMPACT_E2E_KEEP !== '1') {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('shows lenses, Problems, the Blast Radius view and the batch peek after a signature edit', async () => {
    // Open pkg/auth.py with Quick Open and add a required parameter to login().
    await page.keyboard.press('Control+P');
    const quickOpen = page.locator('.quick-input-widget input');
    await quickOpen.waitFor({ state: 'visible' });
    await quickOpen.fill('auth.py');
    await page
      .locator('.quick-input-list .monaco-list-row', { hasText: 'auth.py' })
      .first()
      .waitFor({ state: 'visible' });
    await page.keyboard.press('Enter');
    const editor = page.locator('.editor-instance .monaco-editor').first();
    await editor.locator('.view-lines', { hasText: 'def login(self, user, password):' }).waitFor({
      timeout: STEP_TIMEOUT,
    });
    await page.keyboard.press('Control+G');
    await page.keyboard.type('10');
    await page.keyboard.press('Enter');
    await page.keyboard.press('End');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.type(', mfa_code');
    await page.keyboard.press('Escape');
    await editor
      .locator('.view-lines', { hasText: 'def login(self, user, password, mfa_code):' })
      .waitFor();

    // The lenses above the definition.
    const lenses = editor.locator('.codelens-decoration');
    await lenses
      .filter({ hasText: /Blast radius: \d+ must/ })
      .first()
      .waitFor({ timeout: STEP_TIMEOUT });
    const lensText = (await lenses.allInnerTexts()).join(' | ');
    assert.match(lensText, /Blast radius: 4 must · 1 may · 1 batch(?!es)/);
    assert.match(lensText, /Batch 1 · 6 sites: login_endpoint → login_view → …/);
    assert.match(lensText, /Run 3 affected tests/);
    // The tests lens shows whole, inside the editor, at this width.
    const testsLens = editor.locator('.codelens-decoration a', { hasText: /Run 3 affected tests/ });
    const lensBox = await boxOf(testsLens.first());
    const editorBox = await boxOf(editor);
    assert.ok(lensBox !== null && editorBox !== null);
    assert.ok(
      lensBox.x + lensBox.width <= editorBox.x + editorBox.width - 14,
      `the tests lens ends at ${String(lensBox.x + lensBox.width)}, past the editor's ${String(editorBox.x + editorBox.width)}`,
    );
    await shot('1-lenses');

    // The cache folder stays out of the Explorer (the extension's files.exclude default), and
    // the defaults it adds to are kept (.git stays hidden too).
    const explorerRows = page.locator('.explorer-folders-view .monaco-list-row');
    await explorerRows.filter({ hasText: 'pyproject.toml' }).first().waitFor();
    const explorer = await explorerRows.allInnerTexts();
    assert.ok(!explorer.some((row) => row.includes('.impact_ls')), explorer.join(', '));
    assert.ok(!explorer.some((row) => row.trim() === '.git'), explorer.join(', '));

    // The Problems panel: warnings at the broken calls in the other files.
    await page.keyboard.press('Control+Shift+M');
    const markers = page.locator('.markers-panel');
    await markers.waitFor({ state: 'visible' });
    const views = markers.locator('.monaco-list-row', { hasText: 'views.py' }).first();
    await views.waitFor({ timeout: STEP_TIMEOUT });
    await markers
      .locator('.monaco-list-row', { hasText: 'handlers.py' })
      .first()
      .waitFor({ timeout: STEP_TIMEOUT });
    const problems = (await markers.locator('.monaco-list-row').allInnerTexts()).join('\n');
    // What broke leads the message, so the panel's cut keeps it.
    assert.match(
      problems,
      /missing required argument 'mfa_code' — method-signature changed \(added param mfa_code\) → pkg\.views\.login_view must re-bind via CalledBy/,
    );
    assert.match(problems, /pkg\.api\.handlers\.login_endpoint must re-bind via CalledBy/);
    const viewsWarning = markers
      .locator('.monaco-list-row', { hasText: "missing required argument 'mfa_code'" })
      .first();
    assert.ok((await viewsWarning.locator('.codicon-warning').count()) > 0);
    await shot('2-problems');

    // The Blast Radius view, through the palette command. Its tree renders only the rows in
    // sight, so the panel is closed and the folder section collapsed to give it the height.
    await page.keyboard.press('Control+J');
    await page.locator('.pane-header', { hasText: 'vscode_demo' }).first().click();
    await runCommand('Impact: Show Blast Radius');
    const tree = page.locator('.pane', {
      has: page.locator('.pane-header', { hasText: 'Blast Radius' }),
    });
    await tree
      .locator('.monaco-list-row', { hasText: 'MUST-INSPECT' })
      .first()
      .waitFor({ timeout: STEP_TIMEOUT });
    const rows = await tree.locator('.monaco-list-row').allInnerTexts();
    const treeText = rows.join('\n');
    assert.match(treeText, /MUST-INSPECT · 4 sites/);
    assert.match(treeText, /views\.login_view/);
    assert.match(treeText, /handlers\.login_endpoint/);
    assert.match(treeText, /MAY-IMPACT · 1 site/);
    assert.match(treeText, /Batches · 1/);
    assert.match(treeText, /Affected tests · 3/);
    // One severity language: the MUST sites wear the Problems panel's warning icon, not error.
    const mustSite = tree.locator('.monaco-list-row', { hasText: 'views.login_view' }).first();
    assert.equal(await mustSite.locator('.codicon-warning').count(), 1);
    assert.equal(await tree.locator('.codicon-error').count(), 0);
    const maySite = tree.locator('.monaco-list-row', { hasText: 'test_login_view' }).first();
    assert.equal(await maySite.locator('.codicon-info').count(), 1);
    const screenshot = await shot('3-blast-radius-view');
    console.log(`screenshot: ${screenshot}`);

    // The language status item beside "Python" in the status bar.
    await page.locator('[id="status.languageStatus"]').click();
    const status = page.locator('.hover-language-status', { hasText: 'Impact' });
    await status.first().waitFor({ timeout: STEP_TIMEOUT });
    assert.match(await status.first().innerText(), /Impact: 4 must · 1 may/);
    await shot('3b-language-status');
    await page.keyboard.press('Escape');

    // A click on a site opens it.
    await tree.locator('.monaco-list-row', { hasText: 'views.login_view' }).first().click();
    await page
      .locator('.tabs-container .tab', { hasText: 'views.py' })
      .first()
      .waitFor({ timeout: STEP_TIMEOUT });

    // Back in auth.py, the batch lens opens the references peek on the batch's sites.
    await page.locator('.tabs-container .tab', { hasText: 'auth.py' }).first().click();
    await editor
      .locator('.codelens-decoration a', { hasText: /Batch 1 · / })
      .first()
      .click({ timeout: STEP_TIMEOUT });
    const peek = page.locator('.peekview-widget');
    await peek.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
    await peek.locator('.monaco-list-row', { hasText: 'views.py' }).first().waitFor();
    await shot('4-batch-peek');
    await page.keyboard.press('Escape');

    // Save, then the tests lens runs them in a terminal with the interpreter: exactly the
    // three tests the analysis named fail on the new signature.
    await page.keyboard.press('Control+S');
    await editor
      .locator('.codelens-decoration a', { hasText: /Run 3 affected tests/ })
      .first()
      .click({ timeout: STEP_TIMEOUT });
    const terminal = page.locator('.terminal-wrapper .xterm-rows');
    await terminal
      .filter({ hasText: /3 failed/ })
      .first()
      .waitFor({ timeout: STEP_TIMEOUT });
    const terminalText = await terminal.first().innerText();
    for (const test of [
      'tests/test_auth.py::test_login',
      'tests/test_auth.py::test_wrong_password',
      'tests/test_views.py::test_login_view',
    ]) {
      assert.ok(terminalText.includes(`FAILED ${test} `), `${test} failed:\n${terminalText}`);
    }
    assert.match(terminalText, /missing 1 required positional argument: 'mfa_code'/);
    await shot('5-affected-tests-terminal');
  });

  it('shows the blast radius as a graph in a webview and opens a site from it', async () => {
    // The Blast Radius view's "Show as graph" (its command, from the palette): the page of
    // `impact-ls analyze --format html`, rendered by the server, in a webview.
    await runCommand('Impact: Show as Graph');
    const webview = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    const must = webview.locator('svg#dag a.node.must_inspect');
    await must.first().waitFor({ timeout: STEP_TIMEOUT });
    assert.equal(await must.count(), 4);
    assert.equal(await webview.locator('svg#dag a.node.edit').count(), 1);
    const labels = await webview.locator('svg#dag g.edge text').allTextContents();
    assert.ok(labels.includes('must re-bind via CalledBy'), labels.join(' | '));
    await shot('6-graph-webview');

    // A click on a node opens its site in the editor.
    await webview.locator('svg#dag a.node', { hasText: 'login_endpoint' }).first().click();
    await page
      .locator('.tabs-container .tab', { hasText: 'handlers.py' })
      .first()
      .waitFor({ timeout: STEP_TIMEOUT });

    // Leave the workbench as the next test expects it: the graph closed, auth.py in front.
    const graphTab = page.locator('.tabs-container .tab', { hasText: 'Blast Radius' }).first();
    await graphTab.hover();
    await graphTab.locator('.tab-actions .action-label').first().click();
    await graphTab.waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
    await page.locator('.tabs-container .tab', { hasText: 'auth.py' }).first().click();
  });

  it('forwards settings live, runs tests through the server, and restarts for a new interpreter', async () => {
    const editor = page.locator('.editor-instance .monaco-editor').first();
    const markers = page.locator('.markers-panel');
    const toasts = page.locator('.notifications-toasts .notification-toast');

    // maySeverity "off" is forwarded without a restart: the MAY-IMPACT entry leaves Problems.
    await page.keyboard.press('Control+Shift+M');
    await markers.locator('.monaco-list-row', { hasText: 'test_views.py' }).first().waitFor();
    workspaceSettings({ maySeverity: 'off' });
    await markers
      .locator('.monaco-list-row', { hasText: 'test_views.py' })
      .first()
      .waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
    await markers.locator('.monaco-list-row', { hasText: 'views.py' }).first().waitFor();

    // testRunner "server": the lens runs pytest in the server; the failures become diagnostics
    // on the tests and the run shows in Test Results.
    workspaceSettings({ maySeverity: 'off', testRunner: 'server' });
    await page.waitForTimeout(1000);
    await editor
      .locator('.codelens-decoration a', { hasText: /Run 3 affected tests/ })
      .first()
      .click({ timeout: STEP_TIMEOUT });
    const failedTests = markers.locator('.monaco-list-row', { hasText: 'affected test failed' });
    await failedTests.nth(2).waitFor({ timeout: STEP_TIMEOUT });
    assert.match(
      (await failedTests.allInnerTexts()).join('\n'),
      /missing 1 required positional argument: 'mfa_code'/,
    );
    await page.locator('.panel .composite-bar .action-item', { hasText: /Test Results/i }).click();
    const results = page.locator('.test-output-peek-tree, .test-results-tree, .pane-body').filter({
      hasText: 'test_wrong_password',
    });
    await results.first().waitFor({ timeout: STEP_TIMEOUT });
    await shot('6-tests-through-server');

    // Another interpreter restarts the server; one without impact_ls gets the fix offered.
    await page.keyboard.press('Escape');
    workspaceSettings({ interpreter: ['python3', '-I', '-S'] });
    const missing = toasts.filter({ hasText: 'impact_ls is not installed for ' });
    await missing.first().waitFor({ timeout: STEP_TIMEOUT });
    // The interpreter's real path, the command it was given as, and the fix to run.
    assert.match(
      await missing.first().innerText(),
      /impact_ls is not installed for (\/\S+) \(python3 -I -S, the impact\.interpreter setting\)\. Fix: run \1 -m pip install impact-ls, or set impact\.interpreter to a Python that has it\./,
    );
    assert.ok(
      await missing.locator('.monaco-button', { hasText: 'Install impact-ls' }).first().isVisible(),
    );
    await shot('7-not-installed');
    await expectNoLens(editor);

    // And back: the server restarts and the lenses return.
    workspaceSettings({});
    await editor
      .locator('.codelens-decoration', { hasText: /Blast radius: 4 must/ })
      .first()
      .waitFor({ timeout: STEP_TIMEOUT });
  });
});
