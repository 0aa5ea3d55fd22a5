/** One field of a protobuf message as it is on the wire. */
export type WireValue =
  | { readonly type: 'varint'; readonly value: bigint }
  | { readonly type: 'fixed64'; readonly bytes: Buffer }
  | { readonly type: 'bytes'; readonly bytes: Buffer }
  | { readonly type: 'fixed32'; readonly bytes: Buffer };

/** A decoded message: field number -> values in wire order (repeated fields have several). */
export type WireMessage = Map<number, WireValue[]>;

/**
 * Decodes the wire format of one protobuf message without a schema (enough to read what an
 * OTLP exporter sends). Throws on a truncated or malformed message.
 */
export const readMessage = (buf: Buffer): WireMessage => {
  const out: WireMessage = new Map();
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= buf.length) throw new Error('truncated varint');
      const b = buf[pos++] ?? 0;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  const take = (n: number): Buffer => {
    if (pos + n > buf.length) throw new Error('truncated field');
    const b = buf.subarray(pos, pos + n);
    pos += n;
    return b;
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const field = key >>> 3;
    let v: WireValue;
    switch (key & 7) {
      case 0:
        v = { type: 'varint', value: varint() };
        break;
      case 1:
        v = { type: 'fixed64', bytes: take(8) };
        break;
      case 2:
        v = { type: 'bytes', bytes: take(Number(varint())) };
        break;
      case 5:
        v = { type: 'fixed32', bytes: take(4) };
        break;
      default:
        throw new Error(`unsupported wire type ${key & 7}`);
    }
    const list = out.get(field) ?? [];
    list.push(v);
    out.set(field, list);
  }
  return out;
};

/** The embedded messages (or strings/bytes) of a field. */
export const bytesOf = (m: WireMessage, field: number): Buffer[] =>
  (m.get(field) ?? []).flatMap((v) => (v.type === 'bytes' ? [v.bytes] : []));

export const stringOf = (m: WireMessage, field: number): string =>
  bytesOf(m, field)[0]?.toString('utf8') ?? '';

export const varintOf = (m: WireMessage, field: number): bigint | undefined => {
  const v = m.get(field)?.[0];
  return v?.type === 'varint' ? v.value : undefined;
};

export const fixed64Of = (m: WireMessage, field: number): bigint | undefined => {
  const v = m.get(field)?.[0];
  return v?.type === 'fixed64' ? v.bytes.readBigUInt64LE(0) : undefined;
};
