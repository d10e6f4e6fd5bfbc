import os from 'node:os';
import t from 'tap';
import { ownOrigins } from './origin.ts';

t.test(
  'own origins come from the public URL, the CORS origins and the listen address, never the request',
  async (t) => {
    const specific = ownOrigins(
      {
        publicUrl: 'https://herald.example.test/base/',
        corsOrigins: ['http://localhost:5173', 'not a url'],
        host: '192.0.2.10',
        port: () => 8080,
      },
      'http',
    );
    t.same([...specific].sort(), ['http://192.0.2.10:8080', 'http://localhost:5173', 'https://herald.example.test']);
    const v6 = ownOrigins({ corsOrigins: [], host: '2001:db8::1', port: () => 8443 }, 'https');
    t.same([...v6], ['https://[2001:db8::1]:8443']);
    const any = ownOrigins({ corsOrigins: [], host: '0.0.0.0', port: () => 8080 }, 'http');
    t.ok(
      any.has('http://localhost:8080') && any.has('http://127.0.0.1:8080'),
      'loopback names for an unspecified host',
    );
    t.ok(any.has(new URL(`http://${os.hostname()}:8080`).origin), "and the machine's host name");
    t.notOk(any.has('http://evil.example.com:8080'));
    t.same(
      [...ownOrigins({ corsOrigins: [], host: '0.0.0.0', port: () => undefined }, 'http')],
      [],
      'no port yet, no listen origins',
    );
  },
);
