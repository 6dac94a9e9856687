import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { parseGraphPage, parseOpenRequest } from '../../common/graphPage';

describe('parseGraphPage', () => {
  it('reads the page the server rendered', () => {
    assert.deepEqual(parseGraphPage({ html: '<!DOCTYPE html>\n<html></html>', root: '/ws' }), {
      html: '<!DOCTYPE html>\n<html></html>',
      root: '/ws',
    });
  });

  it('refuses what is not a page', () => {
    assert.equal(parseGraphPage(null), undefined);
    assert.equal(parseGraphPage({ html: 42 }), undefined);
    assert.equal(parseGraphPage({ html: '<p>not a document</p>' }), undefined);
  });
});

describe('parseOpenRequest', () => {
  it('resolves a root-relative file:line inside the root', () => {
    assert.deepEqual(parseOpenRequest({ command: 'open', file: 'shop/cart.py', line: 19 }, '/ws'), {
      file: '/ws/shop/cart.py',
      line: 19,
    });
  });

  it('takes line 1 when the line is missing or bad', () => {
    assert.deepEqual(parseOpenRequest({ command: 'open', file: 'a.py', line: 0 }, '/ws'), {
      file: '/ws/a.py',
      line: 1,
    });
  });

  it('refuses other messages and paths outside the root', () => {
    assert.equal(parseOpenRequest({ command: 'run', file: 'a.py' }, '/ws'), undefined);
    assert.equal(parseOpenRequest({ command: 'open', file: '../etc/passwd' }, '/ws'), undefined);
    assert.equal(parseOpenRequest({ command: 'open', file: 'a.py' }, ''), undefined);
    assert.equal(parseOpenRequest('open', '/ws'), undefined);
  });
});
