import { describe, expect, it } from 'vitest';
import { tlsHint } from './tls-hint.js';

const mtls = { certFile: 'w.pem', keyFile: 'w-key.pem', caFile: 'ca.pem' };
const caOnly = { certFile: '', keyFile: '', caFile: 'ca.pem' };
const grpcSays = (last: string): string =>
  `14 UNAVAILABLE: No connection established. Last error: ${last}. Resolution note: `;

describe('tlsHint', () => {
  it('names the client certificate settings when the coordinator requires one', () => {
    const m = grpcSays('SSL routines:ssl3_read_bytes:tlsv13 alert certificate required');
    expect(tlsHint(m, caOnly)).toContain('SVC_WORKER_TLS_CERT_FILE');
  });

  it("points at the coordinator's CA when the client certificate is refused or the link drops", () => {
    for (const last of [
      'SSL alert number 48: alert unknown ca',
      'Failed to connect',
      'read ECONNRESET',
    ])
      expect(tlsHint(grpcSays(last), mtls)).toContain("signed by the coordinator's CA");
  });

  it('names worker.tlsCaFile when the coordinator certificate is not trusted', () => {
    const m = grpcSays('Error: self-signed certificate in certificate chain');
    expect(tlsHint(m, caOnly)).toContain('SVC_WORKER_TLS_CA_FILE');
  });

  it('suggests TLS to a plain worker whose connection is dropped', () => {
    expect(tlsHint(grpcSays('Failed to connect'), undefined)).toContain('SVC_WORKER_TLS_CA_FILE');
  });

  it('says nothing for failures that are not TLS', () => {
    expect(tlsHint(grpcSays('Error: connect ECONNREFUSED 127.0.0.1:50055'), mtls)).toBe('');
    expect(tlsHint(grpcSays('getaddrinfo ENOTFOUND coord.internal'), undefined)).toBe('');
  });
});
