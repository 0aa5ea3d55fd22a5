import type { TlsFiles } from '../server/credentials.js';

const WORKER_CERT =
  'worker.tlsCertFile and worker.tlsKeyFile (SVC_WORKER_TLS_CERT_FILE, SVC_WORKER_TLS_KEY_FILE)';
const MAKE_CERT = '`trellis certs --out <the coordinator CA folder> --worker <id>`';

/**
 * What a worker should change when its connection to the coordinator fails in the TLS handshake,
 * judged from the error text grpc-js gives (the OpenSSL alert), or '' when the failure does not
 * look like TLS. With TLS 1.3 a server refusing a client certificate may only close the
 * connection (grpc-js then says "Failed to connect" or ECONNRESET), so such a close gets the
 * likeliest advice given how this worker is set up.
 */
export const tlsHint = (message: string, tls: TlsFiles | undefined): string => {
  const clientCert = tls !== undefined && tls.certFile !== '';
  if (/certificate required/i.test(message))
    return `the coordinator requires a client certificate (mutual TLS): set ${WORKER_CERT} to this worker's own certificate, made with ${MAKE_CERT}`;
  if (/unknown ca|bad certificate|certificate unknown|decrypt error/i.test(message))
    return `the coordinator refused this worker's client certificate: use one signed by the coordinator's CA (coordinator.tlsCaFile), made with ${MAKE_CERT}`;
  if (
    /self[- ]signed|unable to (get|verify)|certificate verify failed|altnames|Hostname\/IP/i.test(
      message,
    )
  )
    return "this worker does not trust the coordinator's certificate: set worker.tlsCaFile (SVC_WORKER_TLS_CA_FILE) to the CA that signed it, and dial a name the certificate lists (`trellis certs --host`)";
  // a TLS server dropping a connection during the handshake: grpc-js tells only this much
  const dropped = /Failed to connect|ECONNRESET|Connection dropped|wrong version number/i.test(
    message,
  );
  if (dropped && tls === undefined)
    return (
      'if the coordinator uses TLS (its start line says "TLS"), set worker.tlsCaFile (SVC_WORKER_TLS_CA_FILE) to its CA, and with mutual TLS this worker\'s own certificate in ' +
      WORKER_CERT
    );
  if (dropped && clientCert)
    return `with mutual TLS a connection closed during the handshake usually means the coordinator does not accept this worker's client certificate: check ${WORKER_CERT} is signed by the coordinator's CA (coordinator.tlsCaFile), or make one with ${MAKE_CERT}`;
  return '';
};
