import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import {
  affectedTestIds,
  emptyReport,
  parseReport,
  resolveReportPath,
  shortName,
  summaryText,
} from '../../common/report';
import { type TreeNode, buildTree } from '../../common/reportTree';

// A copy of tests/golden/report_signature_change.json, the server's report schema.
const FIXTURE = join(__dirname, 'fixtures', 'report_signature_change.json');

function loadFixture(): unknown {
  return JSON.parse(readFileSync(FIXTURE, 'utf8'));
}

function report() {
  const parsed = parseReport(loadFixture());
  assert.ok(parsed);
  return parsed;
}

function child(nodes: TreeNode[], id: string): TreeNode {
  const found = nodes.find((n) => n.id === id);
  assert.ok(found, `no node ${id} among ${nodes.map((n) => n.id).join(', ')}`);
  return found;
}

describe('parseReport', () => {
  it('reads the report of a signature change', () => {
    const r = report();
    assert.equal(summaryText(r), 'Impact: 2 must · 2 may');
    assert.equal(r.triage.low_risk.length, 2);
    assert.deepEqual(r.changes, [
      {
        changeType: 'method-signature',
        entity: 'pkg.auth.LoginService.login',
        file: 'pkg/auth.py',
        lineRange: [12, 16],
        beforeSig: 'def login(self, user):',
        afterSig: 'def login(self, user, mfa_code):',
      },
    ]);
    const first = r.triage.must_inspect[0];
    assert.deepEqual(first, {
      entity: 'pkg.api.handlers.login_endpoint',
      file: 'pkg/api/handlers.py',
      line: 17,
      range: [
        [17, 11],
        [17, 48],
      ],
      conf: 0.9,
      distance: 1,
      relation: 'CalledBy',
      reason:
        'method-signature changed (added param mfa_code) → login_endpoint must re-bind via CalledBy',
      breaks: ["missing required argument 'mfa_code'"],
      seed: 'pkg.auth.LoginService.login',
      unanalyzable: false,
      nameMatched: false,
    });
    assert.equal(r.triage.may_impact[0]?.unanalyzable, true);
    assert.deepEqual(
      r.batches.map((b) => [b.batchId, b.size, b.members.length]),
      [
        [0, 4, 4],
        [1, 1, 1],
      ],
    );
    assert.deepEqual(affectedTestIds(r), [
      'tests/test_auth.py::TestLogin::test_mfa',
      'tests/test_views.py::test_login_view',
    ]);
    assert.equal(r.next?.action, 'edit');
    assert.deepEqual(r.audit.notes, ['jedi confirmed 1 of 2 name-matched candidates']);
  });

  it('refuses what is not a report and fills what is missing', () => {
    assert.equal(parseReport(undefined), undefined);
    assert.equal(parseReport('report'), undefined);
    assert.equal(parseReport([1, 2]), undefined);
    const sparse = parseReport({ triage: { must_inspect: [{ entity: 'a.f', file: 'a.py' }, 7] } });
    assert.ok(sparse);
    assert.equal(sparse.root, '.');
    assert.deepEqual(
      sparse.triage.must_inspect.map((s) => [s.entity, s.line, s.range, s.conf]),
      [['a.f', 1, undefined, 0]],
    );
    assert.deepEqual(sparse.tests, []);
    assert.deepEqual(sparse.batches, []);
  });

  it('merges the reports of a multi-root workspace with absolute paths', () => {
    const merged = parseReport({
      version: 1,
      workspaces: [
        { root: 'file:///ws/one', report: loadFixture() },
        {
          root: 'file:///ws/two%20words',
          report: {
            triage: { must_inspect: [{ entity: 'b.g', file: 'b.py', line: 3 }] },
            batches: [{ batch_id: 0, members: ['b.g'], size: 1 }],
          },
        },
      ],
    });
    assert.ok(merged);
    assert.deepEqual(
      merged.triage.must_inspect.map((s) => `${s.file}:${s.line}`),
      ['/ws/one/pkg/api/handlers.py:17', '/ws/one/pkg/views.py:41', '/ws/two words/b.py:3'],
    );
    assert.deepEqual(
      merged.batches.map((b) => b.batchId),
      [0, 1, 2],
    );
    assert.equal(merged.changes[0]?.file, '/ws/one/pkg/auth.py');
    assert.equal(summaryText(merged), 'Impact: 3 must · 2 may');
  });

  it('keeps every entry of the live golden report, if the repository has it', (t) => {
    const golden = join(
      __dirname,
      '..',
      '..',
      '..',
      '..',
      'tests',
      'golden',
      'report_signature_change.json',
    );
    if (!existsSync(golden)) {
      t.skip('tests/golden is not beside vscode-client');
      return;
    }
    const raw: unknown = JSON.parse(readFileSync(golden, 'utf8'));
    const parsed = parseReport(raw);
    assert.ok(parsed);
    assert.ok(typeof raw === 'object' && raw !== null && 'triage' in raw);
    const triage = raw.triage;
    assert.ok(typeof triage === 'object' && triage !== null);
    for (const bucket of ['must_inspect', 'may_impact', 'low_risk'] as const) {
      const entries: unknown =
        bucket in triage ? Object.getOwnPropertyDescriptor(triage, bucket)?.value : [];
      assert.ok(Array.isArray(entries));
      assert.equal(parsed.triage[bucket].length, entries.length, bucket);
    }
  });
});

describe('buildTree', () => {
  it('shows nothing for an empty report, so the welcome text shows', () => {
    assert.deepEqual(buildTree(emptyReport()), []);
  });

  it('lays out next step, changes, buckets, batches and tests in reading order', () => {
    const nodes = buildTree(report());
    assert.deepEqual(
      nodes.map((n) => [n.label, n.expanded]),
      [
        ['Next: edit', undefined],
        ['Changed · 1', true],
        ['MUST-INSPECT · 2 sites', true],
        ['MAY-IMPACT · 2 sites', true],
        ['LOW-RISK · 2 sites', false],
        ['Batches · 2', true],
        ['Affected tests · 2', true],
      ],
    );
  });

  it('lists sites with their location and what broke, and opens the exact range', () => {
    const must = child(buildTree(report()), 'bucket:must_inspect');
    assert.deepEqual(
      must.children.map((n) => [n.label, n.description, n.icon]),
      [
        [
          'handlers.login_endpoint',
          "pkg/api/handlers.py:17 · missing required argument 'mfa_code'",
          'warning',
        ],
        ['views.login_view', "pkg/views.py:41 · missing required argument 'mfa_code'", 'warning'],
      ],
    );
    // the severities of the Problems panel: MUST a warning, MAY information
    const may = child(buildTree(report()), 'bucket:may_impact');
    assert.deepEqual(
      [must.icon, may.icon, ...may.children.map((n) => n.icon)],
      ['warning', 'info', 'info', 'info'],
    );
    assert.deepEqual(must.children[0]?.location, {
      file: 'pkg/api/handlers.py',
      line: 17,
      character: 11,
      endLine: 17,
      endCharacter: 48,
    });
    assert.equal(
      must.children[0].tooltip,
      [
        'pkg.api.handlers.login_endpoint',
        'pkg/api/handlers.py:17',
        'method-signature changed (added param mfa_code) → login_endpoint must re-bind via CalledBy',
        "↳ missing required argument 'mfa_code'",
        'confidence 0.90 · distance 1 · CalledBy',
      ].join('\n'),
    );
  });

  it('shows the cause label where nothing was proved broken, and flags unanalyzable sites', () => {
    const may = child(buildTree(report()), 'bucket:may_impact');
    assert.deepEqual(
      may.children.map((n) => n.description),
      [
        "pkg/registry.py:7 · [unanalyzable] string-keyed getattr of 'login'",
        'pkg/session.py:23 · method-signature changed (added param mfa_code) → validate must be re-checked via CalledBy',
      ],
    );
  });

  it('numbers batches from 1 in order, as the lenses do, each member located by its site, DAG node or change', () => {
    const batches = child(buildTree(report()), 'batches');
    assert.deepEqual(
      batches.children.map((b) => [b.label, b.description]),
      [
        [
          'Batch 1 · 4 sites',
          'LoginService.login → handlers.login_endpoint → views.login_view → Session.validate',
        ],
        ['Batch 2 · 1 site', 'registry.dispatch'],
      ],
    );
    assert.deepEqual(
      batches.children[0]?.children.map((m) => [m.label, m.description]),
      [
        ['1. LoginService.login', 'pkg/auth.py:12'],
        ['2. handlers.login_endpoint', 'pkg/api/handlers.py:17'],
        ['3. views.login_view', 'pkg/views.py:41'],
        ['4. Session.validate', 'pkg/session.py:23'],
      ],
    );
  });

  it('lists affected tests with their confidence and finds their definition on click', () => {
    const tests = child(buildTree(report()), 'tests');
    assert.deepEqual(
      tests.children.map((t) => [t.label, t.description, t.location?.file, t.location?.findText]),
      [
        ['tests/test_auth.py::TestLogin::test_mfa', '1.00', 'tests/test_auth.py', 'def test_mfa('],
        [
          'tests/test_views.py::test_login_view',
          '0.56',
          'tests/test_views.py',
          'def test_login_view(',
        ],
      ],
    );
  });

  it('keeps node ids stable across refreshes so expansion survives', () => {
    const ids = (nodes: TreeNode[]): string[] => nodes.flatMap((n) => [n.id, ...ids(n.children)]);
    const first = ids(buildTree(report()));
    assert.deepEqual(ids(buildTree(report())), first);
    assert.equal(new Set(first).size, first.length, 'ids are unique');
  });

  it('says when the report is stale or truncated', () => {
    const r = { ...report(), stale: true, truncated: true };
    assert.deepEqual(
      buildTree(r)
        .slice(0, 2)
        .map((n) => n.label),
      ['Stale', 'Truncated'],
    );
  });
});

describe('paths', () => {
  it('resolves report paths against the report root and the workspace folder', () => {
    assert.equal(resolveReportPath('pkg/a.py', '.', '/ws'), '/ws/pkg/a.py');
    assert.equal(resolveReportPath('pkg/a.py', '/repo', '/ws'), '/repo/pkg/a.py');
    assert.equal(resolveReportPath('pkg/a.py', 'sub', '/ws/'), '/ws/sub/pkg/a.py');
    assert.equal(resolveReportPath('/abs/a.py', '/repo', '/ws'), '/abs/a.py');
    assert.equal(resolveReportPath('', '.', '/ws'), '/ws');
  });

  it('shortens entities to their last two parts', () => {
    assert.equal(shortName('pkg.auth.LoginService.login'), 'LoginService.login');
    assert.equal(shortName('main'), 'main');
  });
});
