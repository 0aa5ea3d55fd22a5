import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkHostKey, knownHostName, parseKnownHosts } from './known-hosts.js';

const KEY_A = Buffer.from('key-a').toString('base64');
const KEY_B = Buffer.from('key-b').toString('base64');

describe('known_hosts', () => {
  it('names hosts on other ports [host]:port', () => {
    expect(knownHostName('app-1', 22)).toBe('app-1');
    expect(knownHostName('127.0.0.1', 2222)).toBe('[127.0.0.1]:2222');
  });

  it('finds a known key, a mismatching key and an unknown host', () => {
    const entries = parseKnownHosts(
      `# comment\n[127.0.0.1]:2222,other ssh-ed25519 ${KEY_A}\n@revoked * ssh-rsa ${KEY_B}\nbad-line\n`,
    );
    expect(entries).toHaveLength(1);
    expect(checkHostKey(entries, '127.0.0.1', 2222, Buffer.from('key-a'))).toBe('known');
    expect(checkHostKey(entries, 'other', 22, Buffer.from('key-a'))).toBe('known');
    expect(checkHostKey(entries, '127.0.0.1', 2222, Buffer.from('key-b'))).toBe('mismatch');
    expect(checkHostKey(entries, '127.0.0.1', 22, Buffer.from('key-a'))).toBe('unknown');
  });

  it('matches hashed host names and wildcards', () => {
    const salt = Buffer.from('0123456789abcdefghij');
    const hash = createHmac('sha1', salt).update('[db]:2200').digest('base64');
    const entries = parseKnownHosts(
      `|1|${salt.toString('base64')}|${hash} ssh-ed25519 ${KEY_A}\n*.internal ssh-ed25519 ${KEY_B}\n`,
    );
    expect(checkHostKey(entries, 'db', 2200, Buffer.from('key-a'))).toBe('known');
    expect(checkHostKey(entries, 'app.internal', 22, Buffer.from('key-b'))).toBe('known');
    expect(checkHostKey(entries, 'app.external', 22, Buffer.from('key-b'))).toBe('unknown');
  });
});
