#!/usr/bin/env python3
"""Writes the envelope test vectors from docs/format.md alone.

This is an independent implementation of the envelope on PyNaCl (libsodium),
written from the spec, not from the Swift code: the Swift tests check that
both agree byte for byte. Run: pip install pynacl; then
python3 scripts/make-vectors.py > Tests/EnvelopeTests/Fixtures/vectors.json
(version 2, what famctl writes) and
python3 scripts/make-vectors.py 1 > Tests/EnvelopeTests/Fixtures/vectors-v1.json
(version 1, which famctl still reads).
"""
import hashlib, json, struct, sys, uuid
import nacl.bindings as na

TAG = b"famctlev"
VERSION = int(sys.argv[1]) if len(sys.argv) > 1 else 2
assert VERSION in (1, 2)


def envelope(seed, family, seq, previous, hlc, epoch, key, nonce, body):
    pk, sk = na.crypto_sign_seed_keypair(seed)
    n = len(body) + 16
    header = (TAG + bytes([VERSION, 0]) + family + pk + struct.pack(">Q", seq) + previous
              + struct.pack(">Q", hlc) + struct.pack(">I", epoch) + nonce + struct.pack(">I", n))
    assert len(header) == 138
    ct = na.crypto_aead_xchacha20poly1305_ietf_encrypt(body, header, nonce, key)
    assert len(ct) == n
    signed = header + ct
    sig = na.crypto_sign(signed, sk)[:64]  # crypto_sign output is signature || message
    full = signed + sig
    # Version 2: the id is the hash of the signed bytes; version 1 hashed the signature too.
    eid = hashlib.blake2b(full if VERSION == 1 else signed, digest_size=32).digest()
    return pk, full, eid, sig


def hlc(ms, counter):
    return ms << 16 | counter


def main():
    family = uuid.UUID("6f1c7d2e-9a43-4b8e-a5d1-3c0b9e7f2a64")
    cases = []
    prev = bytes(32)
    seed = bytes(range(32))
    key = bytes([0x42] * 32)
    bodies = [
        '{"at":"2026-11-29T08:15:00+01:00","fields":{"amountMl":120,"kind":"bottle","milk":"formula"},'
        '"focus":"baby:0f8e2d4c-5b6a-4978-8c1d-2e3f4a5b6c7d","record":"a1b2c3d4-e5f6-4711-8899-aabbccddeeff",'
        '"schema":1,"store":"feeding","type":"record.put"}',
        '{"focus":"baby:0f8e2d4c-5b6a-4978-8c1d-2e3f4a5b6c7d","record":"a1b2c3d4-e5f6-4711-8899-aabbccddeeff",'
        '"schema":1,"store":"feeding","type":"record.delete"}',
        '{"note":"宝宝第一次吃胡萝卜 🥕","schema":1,"type":"x.unknown.future"}',
    ]
    times = [hlc(1_795_000_000_000, 0), hlc(1_795_000_000_000, 1), hlc(1_795_000_060_000, 0)]
    for i, body in enumerate(bodies):
        seq = i + 1
        nonce = bytes([(7 * i + j) & 0xFF for j in range(24)])
        epoch = 0 if i < 2 else 3
        k = key if epoch == 0 else bytes([0x17] * 32)
        pk, full, eid, sig = envelope(seed, family.bytes, seq, prev, times[i], epoch, k, nonce, body.encode())
        cases.append({
            "name": f"chain-{seq}",
            "authorSeed": seed.hex(), "family": str(family), "epoch": epoch, "epochKey": k.hex(),
            "seq": seq, "previous": prev.hex(), "hlc": str(times[i]), "nonce": nonce.hex(), "body": body,
            "authorKey": pk.hex(), "envelope": full.hex(), "id": eid.hex(), "signature": sig.hex(),
        })
        prev = eid
    json.dump({"format": f"famctl envelope v{VERSION}", "vectors": cases}, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
