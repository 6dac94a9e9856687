/**
 * The arguments of a batch lens, `[uri, position, locations]`, read from the server's JSON.
 *
 * The server writes them as `editor.action.showReferences` expects them, but in LSP shapes
 * (strings and plain objects); VS Code's command needs its own `Uri`, `Position` and `Location`
 * instances, so the client converts them (in `vscodeapi.ts`) before the lens is shown.
 *
 * This module must not import `vscode`: it is unit-tested under plain Node.
 */

export interface LspPosition {
  line: number;
  character: number;
}

export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

export interface LspLocation {
  uri: string;
  range: LspRange;
}

export interface PeekArguments {
  uri: string;
  position: LspPosition;
  locations: LspLocation[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function position(value: unknown): LspPosition | undefined {
  if (
    isObject(value) &&
    typeof value.line === 'number' &&
    typeof value.character === 'number' &&
    value.line >= 0 &&
    value.character >= 0
  ) {
    return { line: value.line, character: value.character };
  }
  return undefined;
}

function range(value: unknown): LspRange | undefined {
  if (!isObject(value)) {
    return undefined;
  }
  const start = position(value.start);
  const end = position(value.end);
  return start !== undefined && end !== undefined ? { start, end } : undefined;
}

function location(value: unknown): LspLocation | undefined {
  if (!isObject(value)) {
    return undefined;
  }
  // LocationLink shapes (targetUri/targetRange) are accepted too.
  const uri = typeof value.uri === 'string' ? value.uri : value.targetUri;
  const where = range(value.range ?? value.targetSelectionRange ?? value.targetRange);
  return typeof uri === 'string' && where !== undefined ? { uri, range: where } : undefined;
}

/** `[uri, position, locations]` in LSP shapes → a typed value; anything else → `undefined`. */
export function parsePeekArguments(
  args: readonly unknown[] | undefined,
): PeekArguments | undefined {
  if (args === undefined || args.length < 3) {
    return undefined;
  }
  const [uri, where, locations] = args;
  const start = position(where);
  if (typeof uri !== 'string' || start === undefined || !Array.isArray(locations)) {
    return undefined;
  }
  const parsed: LspLocation[] = [];
  for (const item of locations) {
    const loc = location(item);
    if (loc === undefined) {
      return undefined;
    }
    parsed.push(loc);
  }
  return { uri, position: start, locations: parsed };
}
