/**
 * Report → the Blast Radius view's tree, as plain values.
 *
 * Top level, in reading order: what changed, MUST-INSPECT / MAY-IMPACT / LOW-RISK with their
 * sites (cause label beside each), the change batches in the order to edit them, and the
 * affected tests. An empty report gives no nodes, so the view shows its welcome text. Node ids
 * are stable across refreshes so VS Code keeps what the user expanded.
 *
 * This module must not import `vscode`: `blastRadiusView.ts` maps these nodes to TreeItems.
 */

import { type Bucket, type Report, type Site, BUCKETS, shortName } from './report';

export type NodeKind =
  | 'note'
  | 'changes'
  | 'change'
  | 'bucket'
  | 'site'
  | 'batches'
  | 'batch'
  | 'member'
  | 'tests'
  | 'test';

/** A codicon id, e.g. `error` for `$(error)`. */
export type IconId =
  | 'error'
  | 'warning'
  | 'info'
  | 'question'
  | 'edit'
  | 'symbol-method'
  | 'layers'
  | 'beaker'
  | 'list-ordered'
  | 'arrow-right'
  | 'circle-outline';

/** Where a click goes: report paths (root-relative), one-based lines, zero-based columns. */
export interface NodeLocation {
  file: string;
  line: number;
  character: number;
  endLine: number;
  endCharacter: number;
  /** Look for this text in the file when the report has no line (tests). */
  findText?: string;
}

export interface TreeNode {
  id: string;
  kind: NodeKind;
  label: string;
  description?: string;
  tooltip?: string;
  icon?: IconId;
  /** `true` expanded, `false` collapsed, `undefined` a leaf. */
  expanded?: boolean;
  location?: NodeLocation;
  children: TreeNode[];
}

export const BUCKET_LABELS: Record<Bucket, string> = {
  must_inspect: 'MUST-INSPECT',
  may_impact: 'MAY-IMPACT',
  low_risk: 'LOW-RISK',
};

// The severities of the Problems panel: MUST-INSPECT sites are warnings there, MAY-IMPACT ones
// information (by default), so the view uses those icons too; LOW-RISK sites are no problem.
const BUCKET_ICONS: Record<Bucket, IconId> = {
  must_inspect: 'warning',
  may_impact: 'info',
  low_risk: 'circle-outline',
};

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

function siteLocation(site: Site): NodeLocation {
  const [start, end] = site.range ?? [
    [site.line, 0],
    [site.line, 0],
  ];
  return {
    file: site.file,
    line: start[0],
    character: start[1],
    endLine: end[0],
    endCharacter: end[1],
  };
}

function pointLocation(file: string, line: number): NodeLocation {
  return { file, line, character: 0, endLine: line, endCharacter: 0 };
}

function siteNode(bucket: Bucket, site: Site, index: number): TreeNode {
  const flags = [site.unanalyzable ? 'unanalyzable' : '', site.nameMatched ? 'name-matched' : '']
    .filter((flag) => flag !== '')
    .map((flag) => `[${flag}] `)
    .join('');
  const tooltip = [
    site.entity,
    `${site.file}:${site.line}`,
    site.reason,
    ...site.breaks.map((b) => `↳ ${b}`),
    `confidence ${site.conf.toFixed(2)}${site.distance !== undefined ? ` · distance ${site.distance}` : ''}${site.relation !== '' ? ` · ${site.relation}` : ''}`,
  ].filter((line) => line !== '');
  return {
    id: `site:${bucket}:${site.file}:${site.line}:${site.entity}:${index}`,
    kind: 'site',
    label: shortName(site.entity) || site.file,
    description: `${site.file}:${site.line} · ${flags}${site.breaks[0] ?? site.reason}`,
    tooltip: tooltip.join('\n'),
    icon: BUCKET_ICONS[bucket],
    location: siteLocation(site),
    children: [],
  };
}

/** Where a batch member is: its triage site, else its DAG node, else the change itself. */
function memberLocation(report: Report, entity: string): NodeLocation | undefined {
  for (const bucket of BUCKETS) {
    const site = report.triage[bucket].find((s) => s.entity === entity);
    if (site !== undefined) {
      return siteLocation(site);
    }
  }
  const node = report.dagNodes.find((n) => n.entity === entity);
  if (node !== undefined && node.file !== '') {
    return pointLocation(node.file, node.line);
  }
  const change = report.changes.find((c) => c.entity === entity);
  if (change !== undefined && change.file !== '') {
    return pointLocation(change.file, change.lineRange?.[0] ?? 1);
  }
  return undefined;
}

function testLocation(testId: string): NodeLocation {
  const parts = testId.split('::');
  const file = parts[0] ?? testId;
  // Parametrized ids carry `[...]`; the definition has the bare name.
  const name = (parts[parts.length - 1] ?? '').replace(/\[.*\]$/, '');
  return {
    ...pointLocation(file, 1),
    ...(parts.length > 1 && name !== '' ? { findText: `def ${name}(` } : {}),
  };
}

/** Build the view's nodes from a report; no changes at all gives `[]`. */
export function buildTree(report: Report): TreeNode[] {
  const nodes: TreeNode[] = [];
  const total = BUCKETS.reduce((sum, bucket) => sum + report.triage[bucket].length, 0);
  if (report.changes.length === 0 && total === 0 && report.tests.length === 0) {
    return nodes;
  }
  if (report.stale) {
    nodes.push({
      id: 'note:stale',
      kind: 'note',
      label: 'Stale',
      description: 'the edited code does not parse yet; showing the last good analysis',
      icon: 'question',
      children: [],
    });
  }
  if (report.truncated) {
    nodes.push({
      id: 'note:truncated',
      kind: 'note',
      label: 'Truncated',
      description: 'a cap cut the analysis short; some sites are not listed',
      icon: 'question',
      children: [],
    });
  }
  if (report.next !== undefined && report.next.action !== '' && report.next.action !== 'none') {
    nodes.push({
      id: 'note:next',
      kind: 'note',
      label: `Next: ${report.next.action}`,
      description: report.next.reason,
      tooltip: report.next.reason,
      icon: 'arrow-right',
      children: [],
    });
  }

  if (report.changes.length > 0) {
    nodes.push({
      id: 'changes',
      kind: 'changes',
      label: `Changed · ${report.changes.length}`,
      icon: 'edit',
      expanded: true,
      children: report.changes.map((change, index) => ({
        id: `change:${change.file}:${change.entity}:${index}`,
        kind: 'change',
        label: shortName(change.entity) || change.file,
        description: `${change.changeType} · ${change.file}:${change.lineRange?.[0] ?? 1}`,
        tooltip: [
          change.entity,
          change.changeType,
          change.beforeSig !== '' || change.afterSig !== ''
            ? `${change.beforeSig} → ${change.afterSig}`
            : '',
        ]
          .filter((line) => line !== '')
          .join('\n'),
        icon: 'symbol-method',
        location: pointLocation(change.file, change.lineRange?.[0] ?? 1),
        children: [],
      })),
    });
  }

  for (const bucket of BUCKETS) {
    const sites = report.triage[bucket];
    nodes.push({
      id: `bucket:${bucket}`,
      kind: 'bucket',
      label: `${BUCKET_LABELS[bucket]} · ${plural(sites.length, 'site')}`,
      icon: BUCKET_ICONS[bucket],
      expanded: sites.length === 0 ? undefined : bucket !== 'low_risk',
      children: sites.map((site, index) => siteNode(bucket, site, index)),
    });
  }

  if (report.batches.length > 0) {
    nodes.push({
      id: 'batches',
      kind: 'batches',
      label: `Batches · ${report.batches.length}`,
      tooltip: 'Edit and validate each batch together, in this order.',
      icon: 'layers',
      expanded: true,
      // Numbered from 1 in edit order, as the server's batch lenses are.
      children: report.batches.map((batch, ordinal) => ({
        id: `batch:${batch.batchId}`,
        kind: 'batch',
        label: `Batch ${ordinal + 1} · ${plural(batch.size, 'site')}${batch.split ? ' (split)' : ''}`,
        description: batch.members.map(shortName).join(' → '),
        icon: 'list-ordered',
        expanded: false,
        children: batch.members.map((member, index) => {
          const location = memberLocation(report, member);
          return {
            id: `member:${batch.batchId}:${index}:${member}`,
            kind: 'member',
            label: `${index + 1}. ${shortName(member)}`,
            description: location !== undefined ? `${location.file}:${location.line}` : '',
            tooltip: member,
            icon: 'circle-outline',
            ...(location !== undefined ? { location } : {}),
            children: [],
          };
        }),
      })),
    });
  }

  const tests = [...new Map(report.tests.map((t) => [t.test, t])).values()];
  nodes.push({
    id: 'tests',
    kind: 'tests',
    label: `Affected tests · ${tests.length}`,
    icon: 'beaker',
    expanded: tests.length === 0 ? undefined : true,
    children: tests.map((test) => ({
      id: `test:${test.test}`,
      kind: 'test',
      label: test.test,
      description: test.conf.toFixed(2),
      tooltip: `${test.test}\nconfidence ${test.conf.toFixed(2)}${test.file !== '' ? ` (through ${test.file})` : ''}`,
      icon: 'beaker',
      location: testLocation(test.test),
      children: [],
    })),
  });
  return nodes;
}
