/**
 * Pure helpers of the "Show as graph" webview: read the server's `impact.renderBlastRadius`
 * result and the page's `open` messages.
 *
 * This module must not import `vscode`: it is unit-tested under plain Node.
 */

import * as path from 'node:path';

/** What `impact.renderBlastRadius` returns. */
export interface GraphPage {
  html: string;
  root: string;
}

/** A location the page asks the extension to open (1-based line). */
export interface OpenRequest {
  file: string;
  line: number;
}

/** The server's result as a page, or `undefined` when it is not one. */
export function parseGraphPage(value: unknown): GraphPage | undefined {
  if (typeof value !== 'object' || value === null) {
    return undefined;
  }
  const { html, root } = value as Record<string, unknown>;
  if (typeof html !== 'string' || !html.startsWith('<!DOCTYPE html>')) {
    return undefined;
  }
  return { html, root: typeof root === 'string' ? root : '' };
}

/**
 * The page's `{command: "open", file, line}` message as a location inside `root`, or
 * `undefined` for anything else (a path that climbs out of the root is refused).
 */
export function parseOpenRequest(message: unknown, root: string): OpenRequest | undefined {
  if (typeof message !== 'object' || message === null) {
    return undefined;
  }
  const { command, file, line } = message as Record<string, unknown>;
  if (command !== 'open' || typeof file !== 'string' || file === '' || root === '') {
    return undefined;
  }
  const absolute = path.resolve(root, file);
  const relative = path.relative(root, absolute);
  if (relative.startsWith('..') || path.isAbsolute(relative)) {
    return undefined;
  }
  const number = typeof line === 'number' && Number.isInteger(line) && line > 0 ? line : 1;
  return { file: absolute, line: number };
}
