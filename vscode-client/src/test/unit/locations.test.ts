import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { parsePeekArguments } from '../../common/locations';

const RANGE = { start: { line: 16, character: 11 }, end: { line: 16, character: 48 } };

describe('parsePeekArguments', () => {
  it('reads [uri, position, locations] as the server sends them', () => {
    assert.deepEqual(
      parsePeekArguments([
        'file:///ws/pkg/auth.py',
        { line: 11, character: 4 },
        [{ uri: 'file:///ws/pkg/api/handlers.py', range: RANGE }],
      ]),
      {
        uri: 'file:///ws/pkg/auth.py',
        position: { line: 11, character: 4 },
        locations: [{ uri: 'file:///ws/pkg/api/handlers.py', range: RANGE }],
      },
    );
  });

  it('accepts LocationLinks', () => {
    const parsed = parsePeekArguments([
      'file:///a.py',
      { line: 0, character: 0 },
      [{ targetUri: 'file:///b.py', targetRange: RANGE, targetSelectionRange: RANGE }],
    ]);
    assert.deepEqual(parsed?.locations, [{ uri: 'file:///b.py', range: RANGE }]);
  });

  it('leaves other commands alone', () => {
    assert.equal(parsePeekArguments(undefined), undefined);
    assert.equal(parsePeekArguments([{ uri: 'file:///a.py' }]), undefined);
    assert.equal(parsePeekArguments(['file:///a.py', { line: -1, character: 0 }, []]), undefined);
    assert.equal(
      parsePeekArguments(['file:///a.py', { line: 0, character: 0 }, [{ uri: 'file:///b.py' }]]),
      undefined,
    );
  });
});
