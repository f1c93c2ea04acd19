#!/usr/bin/env python3
"""Writes the segment test vectors from docs/format.md alone.

An independent implementation of the segment layout and its file name
(Python's hashlib, written from the spec, not from the Swift code), over
the envelopes of Tests/EnvelopeTests/Fixtures/vectors.json: the Swift tests
check that both agree byte for byte. Run:
python3 scripts/make-segment-vector.py > Tests/ReplicatorTests/Fixtures/segments.json
"""
import hashlib, json, os, struct, uuid

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = os.path.join(HERE, "..", "Tests", "EnvelopeTests", "Fixtures", "vectors.json")


def blake2b256(b):
    return hashlib.blake2b(b, digest_size=32).digest()


def segment(envelopes):
    # Every envelope: one author's, one family's, consecutive seqs (format.md).
    family, author = envelopes[0][10:26], envelopes[0][26:58]
    seqs = [struct.unpack(">Q", e[58:66])[0] for e in envelopes]
    assert all(e[10:26] == family and e[26:58] == author for e in envelopes)
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    first, last = seqs[0], seqs[-1]
    out = b"famctlsg" + bytes([1, 0]) + family + author + struct.pack(">QQI", first, last, len(envelopes))
    assert len(out) == 78
    for e in envelopes:
        out += struct.pack(">I", len(e)) + e
    out += blake2b256(out)
    name = "%s-%016x-%016x-%s.seg" % (author.hex(), first, last, blake2b256(out)[:16].hex())
    return out, name


def main():
    vectors = {v["name"]: v for v in json.load(open(VECTORS))["vectors"]}
    out = []
    for name, parts in [("chain-1-3", ["chain-1", "chain-2", "chain-3"]), ("chain-2-3", ["chain-2", "chain-3"])]:
        envs = [bytes.fromhex(vectors[p]["envelope"]) for p in parts]
        seg, file_name = segment(envs)
        out.append({"name": name, "envelopes": parts, "segment": seg.hex(), "fileName": file_name,
                    "family": str(uuid.UUID(bytes=envs[0][10:26])), "author": envs[0][26:58].hex()})
    print(json.dumps({"format": "famctl segment v1", "vectors": out}, indent=2))


main()
