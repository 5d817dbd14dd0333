// cartwright's payload codec in TypeScript (JavaScript modules), as
// docs/other-languages.md#the-payload-codec describes it: AES-256-GCM over
// the whole serialised Payload, nonce ‖ ciphertext ‖ tag, the key id as
// additional authenticated data (which Temporal's encryption sample does
// not use, so its codec and this one cannot read each other's payloads).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import proto from '@temporalio/proto';

const { Payload } = proto.temporal.api.common.v1;
const ENCODING = 'binary/encrypted';
const CIPHER = 'AES-256-GCM';
const NONCE = 12;
const TAG = 16;
const utf8 = (s) => new TextEncoder().encode(s);
const text = (b) => new TextDecoder().decode(b);

// keyRing parses CARTWRIGHT_PAYLOAD_KEYS ("id:base64,…", 32-byte keys)
// with CARTWRIGHT_PAYLOAD_KEY_ID naming the current key.
export function keyRing(spec, currentId) {
  const keys = new Map();
  for (const part of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
    const i = part.indexOf(':');
    const key = Buffer.from(part.slice(i + 1), 'base64');
    if (i < 1 || key.length !== 32) throw new Error('payload key ring: want id:base64 of 32 bytes');
    keys.set(part.slice(0, i), key);
  }
  if (!keys.has(currentId)) throw new Error(`payload key ring: no key ${currentId}`);
  return { keys, currentId };
}

// CartwrightCodec is a PayloadCodec of the TypeScript SDK.
export class CartwrightCodec {
  constructor(ring) {
    this.ring = ring;
  }

  async encode(payloads) {
    const id = this.ring.currentId;
    const key = this.ring.keys.get(id);
    return payloads.map((p) => {
      if (p.metadata && p.metadata.encoding && text(p.metadata.encoding) === ENCODING) return p;
      const plain = Payload.encode(p).finish();
      const nonce = randomBytes(NONCE);
      const c = createCipheriv('aes-256-gcm', key, nonce);
      c.setAAD(Buffer.from(id, 'utf8'));
      const data = Buffer.concat([nonce, c.update(plain), c.final(), c.getAuthTag()]);
      return {
        metadata: { encoding: utf8(ENCODING), 'encryption-key-id': utf8(id), 'encryption-cipher': utf8(CIPHER) },
        data: new Uint8Array(data),
      };
    });
  }

  async decode(payloads) {
    return payloads.map((p) => {
      if (!p.metadata || !p.metadata.encoding || text(p.metadata.encoding) !== ENCODING) return p;
      const id = text(p.metadata['encryption-key-id'] ?? new Uint8Array());
      const key = this.ring.keys.get(id);
      if (!key) throw new Error(`payload key ${id} is not in the ring`);
      const data = Buffer.from(p.data);
      const d = createDecipheriv('aes-256-gcm', key, data.subarray(0, NONCE));
      d.setAAD(Buffer.from(id, 'utf8'));
      d.setAuthTag(data.subarray(data.length - TAG));
      const plain = Buffer.concat([d.update(data.subarray(NONCE, data.length - TAG)), d.final()]);
      return Payload.decode(plain);
    });
  }
}
