#!/usr/bin/env node
// TEST ONLY: adapter.js with one deliberately defective variant,
// "broken-release", for the conformance suite to fail on
// (strategies/ext/node_test.go registers it as node-broken-release in its
// test binary only). Its acquire is a correct SET key token NX PX, one
// attempt; its release is a plain DEL that never checks the owner, so a
// holder whose lease ran out deletes the next holder's lock and is told
// "ok" (locktest's OwnerOnlyRelease wants not_owner). The real variants of
// adapter.js are served unchanged.
'use strict';

const { main } = require('./adapter');

function brokenRelease(h, clients) {
  const c = clients[0];
  return {
    library: 'lockbench-test-broken-release',
    version: '0',
    caps: { renews: false, reentrant: false, fifo: false, read: false, fenced: false, permits: 1, multi_key: false, caller_token: true, extend: false },
    async acquire(req) {
      const r = await c.set(req.key, req.token, 'PX', req.ttl_ms, 'NX');
      if (r !== 'OK') return { error: 'not_acquired' };
      return { token: req.token, handle: { key: req.key } };
    },
    async release(hd) {
      await c.del(hd.key); // the defect: no owner check
      return true;
    },
    async extend() { return null; },
    abandon() {},
  };
}

main({ 'broken-release': brokenRelease });
