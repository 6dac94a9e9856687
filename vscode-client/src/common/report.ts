/**
 * The blast-radius report (DESIGN §4) as the client sees it, and a forgiving parser for it.
 *
 * The server's `impact.showBlastRadius` returns this JSON. The parser never throws: a missing
 * or mistyped field becomes its empty default, so a newer server with more fields, or an older
 * one with fewer, still shows what it can.
 *
 * This module must not import `vscode`: it is unit-tested under plain Node.
 */

export type Bucket = 'must_inspect' | 'may_impact' | 'low_risk';
export const BUCKETS: readonly Bucket[] = ['must_inspect', 'may_impact', 'low_risk'];

/** A `[line, character]` pair as the report writes ranges: one-based line, zero-based column. */
export type Point = readonly [number, number];

export interface Change {
  changeType: string;
  entity: string;
  file: string;
  lineRange: readonly [number, number] | undefined;
  beforeSig: string;
  afterSig: string;
}

export interface Site {
  entity: string;
  file: string;
  /** One-based line, as in the report. */
  line: number;
  /** `[[line, col], [endLine, endCol]]`: one-based lines, zero-based columns, end exclusive. */
  range: readonly [Point, Point] | undefined;
  conf: number;
  distance: number | undefined;
  relation: string;
  /** The cause label, e.g. `method-signature changed (…) → f must re-bind via CalledBy`. */
  reason: string;
  /** What the binding check proved broken, e.g. `missing required argument 'mfa_code'`. */
  breaks: string[];
  seed: string;
  unanalyzable: boolean;
  nameMatched: boolean;
}

/** A DAG node: where a batch member is defined. */
export interface DagNode {
  entity: string;
  kind: string;
  file: string;
  line: number;
  signature: string;
  batchId: number | undefined;
}

export interface Batch {
  batchId: number;
  members: string[];
  size: number;
  split: boolean;
}

export interface AffectedTest {
  file: string;
  test: string;
  conf: number;
}

export interface Report {
  root: string;
  base: string;
  /** The edited code does not parse yet; this is the last good report. */
  stale: boolean;
  truncated: boolean;
  audit: { verified: string; heuristic: string; notes: string[] };
  changes: Change[];
  triage: Record<Bucket, Site[]>;
  batches: Batch[];
  tests: AffectedTest[];
  dagNodes: DagNode[];
  next: { action: string; reason: string } | undefined;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? value : fallback;
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function point(value: unknown): Point | undefined {
  if (Array.isArray(value) && value.length === 2) {
    const line = num(value[0]);
    const character = num(value[1]);
    if (line !== undefined && character !== undefined) {
      return [line, character];
    }
  }
  return undefined;
}

function range(value: unknown): readonly [Point, Point] | undefined {
  if (Array.isArray(value) && value.length === 2) {
    const start = point(value[0]);
    const end = point(value[1]);
    if (start !== undefined && end !== undefined) {
      return [start, end];
    }
  }
  return undefined;
}

function lineRange(value: unknown): readonly [number, number] | undefined {
  if (Array.isArray(value) && value.length === 2) {
    const first = num(value[0]);
    const last = num(value[1]);
    if (first !== undefined && last !== undefined) {
      return [first, last];
    }
  }
  return undefined;
}

function parseSite(value: unknown): Site | undefined {
  if (!isObject(value)) {
    return undefined;
  }
  const entity = str(value.entity);
  const file = str(value.file);
  if (entity === '' && file === '') {
    return undefined;
  }
  return {
    entity,
    file,
    line: num(value.line) ?? 1,
    range: range(value.range),
    conf: num(value.conf) ?? 0,
    distance: num(value.distance),
    relation: str(value.relation),
    reason: str(value.reason),
    breaks: list(value.breaks)
      .map((b) => (isObject(b) ? str(b.detail, str(b.kind)) : typeof b === 'string' ? b : ''))
      .filter((b) => b !== ''),
    seed: str(value.seed),
    unanalyzable: value.unanalyzable === true,
    nameMatched: value.name_matched === true,
  };
}

function parseDagNode(value: unknown): DagNode | undefined {
  if (!isObject(value) || typeof value.entity !== 'string') {
    return undefined;
  }
  return {
    entity: value.entity,
    kind: str(value.kind),
    file: str(value.file),
    line: num(value.line) ?? 1,
    signature: str(value.signature),
    batchId: num(value.batch_id),
  };
}

function parseChange(value: unknown): Change | undefined {
  if (!isObject(value)) {
    return undefined;
  }
  return {
    changeType: str(value.change_type),
    entity: str(value.entity),
    file: str(value.file),
    lineRange: lineRange(value.line_range),
    beforeSig: str(value.before_sig),
    afterSig: str(value.after_sig),
  };
}

function parseBatch(value: unknown, index: number): Batch | undefined {
  if (!isObject(value)) {
    return undefined;
  }
  const members = list(value.members).filter((m): m is string => typeof m === 'string');
  return {
    batchId: num(value.batch_id) ?? index,
    members,
    size: num(value.size) ?? members.length,
    split: value.split === true,
  };
}

function parseTest(value: unknown): AffectedTest | undefined {
  if (!isObject(value) || typeof value.test !== 'string') {
    return undefined;
  }
  return { file: str(value.file), test: value.test, conf: num(value.conf) ?? 0 };
}

function defined<T>(value: T | undefined): value is T {
  return value !== undefined;
}

/** The empty report: what the view shows before the first analysis. */
export function emptyReport(): Report {
  return {
    root: '',
    base: '',
    stale: false,
    truncated: false,
    audit: { verified: '', heuristic: '', notes: [] },
    changes: [],
    triage: { must_inspect: [], may_impact: [], low_risk: [] },
    batches: [],
    tests: [],
    dagNodes: [],
    next: undefined,
  };
}

/** A `file://` URI's path, or the string itself when it is not one. */
function uriPath(uri: string): string {
  if (!uri.startsWith('file:')) {
    return uri;
  }
  try {
    return decodeURIComponent(new URL(uri).pathname).replace(/^\/([A-Za-z]:)/, '$1');
  } catch {
    return uri;
  }
}

function absolute(file: string, root: string): string {
  return file === '' ? file : resolveReportPath(file, root, root);
}

/** Make every path of `report` absolute against `root`, so reports of several roots can mix. */
function rooted(report: Report, root: string): Report {
  const site = (s: Site): Site => ({ ...s, file: absolute(s.file, root) });
  return {
    ...report,
    root,
    changes: report.changes.map((c) => ({ ...c, file: absolute(c.file, root) })),
    triage: {
      must_inspect: report.triage.must_inspect.map(site),
      may_impact: report.triage.may_impact.map(site),
      low_risk: report.triage.low_risk.map(site),
    },
    tests: report.tests.map((t) => ({ ...t, file: absolute(t.file, root) })),
    dagNodes: report.dagNodes.map((n) => ({ ...n, file: absolute(n.file, root) })),
  };
}

/**
 * One report for a multi-root workspace: `{"workspaces": [{"root": uri, "report": {...}}]}`.
 *
 * Paths become absolute and batches are renumbered in folder order. Test ids stay as pytest
 * wrote them, relative to their own folder.
 */
function mergeWorkspaces(entries: unknown[]): Report {
  const merged = emptyReport();
  for (const entry of entries) {
    if (!isObject(entry)) {
      continue;
    }
    const sub = parseReport(entry.report);
    if (sub === undefined) {
      continue;
    }
    const one = rooted(sub, uriPath(str(entry.root)));
    const offset = merged.batches.length;
    merged.base = merged.base === '' ? one.base : merged.base;
    merged.stale ||= one.stale;
    merged.truncated ||= one.truncated;
    merged.audit.notes.push(...one.audit.notes);
    merged.changes.push(...one.changes);
    for (const bucket of BUCKETS) {
      merged.triage[bucket].push(...one.triage[bucket]);
    }
    merged.batches.push(...one.batches.map((b) => ({ ...b, batchId: b.batchId + offset })));
    merged.tests.push(...one.tests);
    merged.dagNodes.push(...one.dagNodes);
    merged.next ??= one.next?.action === 'none' ? undefined : one.next;
  }
  return merged;
}

/** Parse the server's report JSON; `undefined` when it is not a report at all. */
export function parseReport(value: unknown): Report | undefined {
  if (!isObject(value)) {
    return undefined;
  }
  if (Array.isArray(value.workspaces)) {
    return mergeWorkspaces(value.workspaces);
  }
  const triage = isObject(value.triage) ? value.triage : {};
  const audit = isObject(value.audit) ? value.audit : {};
  const next = isObject(value.next)
    ? { action: str(value.next.action), reason: str(value.next.reason) }
    : undefined;
  const unanalyzed = new Set(
    list(value.unanalyzable)
      .filter(isObject)
      .map((item) => `${str(item.file)}:${String(num(item.line) ?? '')}`),
  );
  const sites = (bucket: Bucket): Site[] =>
    list(triage[bucket])
      .map(parseSite)
      .filter(defined)
      .map((site) =>
        unanalyzed.has(`${site.file}:${String(site.line)}`)
          ? { ...site, unanalyzable: true }
          : site,
      );
  return {
    root: str(value.root, '.'),
    base: str(value.base),
    stale: value.stale === true,
    truncated: audit.truncated === true || (isObject(value.dag) && value.dag.truncated === true),
    audit: {
      verified: str(audit.verified),
      heuristic: str(audit.heuristic),
      notes: list(audit.notes).filter((n): n is string => typeof n === 'string'),
    },
    changes: list(value.changes).map(parseChange).filter(defined),
    triage: {
      must_inspect: sites('must_inspect'),
      may_impact: sites('may_impact'),
      low_risk: sites('low_risk'),
    },
    batches: list(value.batches)
      .map(parseBatch)
      .filter(defined)
      .sort((a, b) => a.batchId - b.batchId),
    tests: list(value.tests).map(parseTest).filter(defined),
    dagNodes: isObject(value.dag) ? list(value.dag.nodes).map(parseDagNode).filter(defined) : [],
    next,
  };
}

/** `Impact: 3 must · 7 may`, the status text. */
export function summaryText(report: Report): string {
  return `Impact: ${report.triage.must_inspect.length} must · ${report.triage.may_impact.length} may`;
}

/** `LoginService.login` for `pkg.auth.LoginService.login`: the last two dotted parts. */
export function shortName(entity: string): string {
  return entity.split('.').slice(-2).join('.');
}

/** The distinct affected test ids, in report order. */
export function affectedTestIds(report: Report): string[] {
  return [...new Set(report.tests.map((t) => t.test))];
}

/**
 * Resolve a report path against the report's root and the workspace folder.
 *
 * Report paths are root-relative with `/` separators; the root may itself be `.` (relative to
 * the workspace folder) or absolute.
 */
export function resolveReportPath(
  file: string,
  reportRoot: string,
  workspaceFolder: string,
): string {
  const isAbsolute = (p: string): boolean => p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p);
  if (isAbsolute(file)) {
    return file;
  }
  const join = (a: string, b: string): string =>
    b === '' || b === '.' ? a : `${a.replace(/[\\/]+$/, '')}/${b.replace(/^\.\//, '')}`;
  const root = reportRoot === '' || reportRoot === '.' ? workspaceFolder : reportRoot;
  const base = isAbsolute(root) ? root : join(workspaceFolder, root);
  return join(base, file);
}
