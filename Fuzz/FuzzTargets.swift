// libFuzzer targets for famctl's parsers of untrusted bytes. Built by
// `make fuzz` into one binary per target (FAMCTL_FUZZ_TARGET selects it at
// build time through -D): envelope, segment, invite, json, field.
// Every input must be handled without a crash; what is found is kept as a
// regression test.
//
// Each target is a function of its own, compiled in every build, and the
// flag only chooses which one the entry point calls: one type-check of
// these sources (`scripts/fuzz.sh --typecheck`) covers all five.

@_cdecl("LLVMFuzzerTestOneInput")
public func famctlFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    #if FUZZ_ENVELOPE
    fuzzEnvelope(bytes)
    #elseif FUZZ_SEGMENT
    fuzzSegment(bytes)
    #elseif FUZZ_INVITE
    fuzzInvite(bytes)
    #elseif FUZZ_JSON
    fuzzJSON(bytes)
    #elseif FUZZ_FIELD
    fuzzField(bytes)
    #else
    #error("build with one of -D FUZZ_ENVELOPE, FUZZ_SEGMENT, FUZZ_INVITE, FUZZ_JSON, FUZZ_FIELD")
    #endif
    return 0
}

/// The envelope's decoder, its signature check and its body's decryption and decoder.
func fuzzEnvelope(_ bytes: [UInt8]) {
    if let env = try? SyncEnvelope(decoding: bytes) {
        _ = env.hasValidSignature
        _ = try? env.openBody(with: EpochKey(epoch: env.epoch, key: SecretBytes([UInt8](repeating: 1, count: 32))))
    }
    _ = try? EventBody(decoding: bytes)
}

/// A segment file's decoder and encoder, and the shared directory's file names.
func fuzzSegment(_ bytes: [UInt8]) {
    if let s = try? Segment(decoding: bytes) { _ = s.encoded() }
    _ = SharedFileName(String(decoding: bytes, as: UTF8.self))
}

/// An invite code as a person types or pastes it.
func fuzzInvite(_ bytes: [UInt8]) {
    _ = try? InviteCode(parsing: String(decoding: bytes, as: UTF8.self))
}

/// The JSON parser (its canonical text must parse again) and the events read from a body.
func fuzzJSON(_ bytes: [UInt8]) {
    if let v = JSONValue.parse(bytes) {
        let again = JSONValue.parse(v.jsonText)
        if again == nil { fatalError("canonical text of a parsed value does not parse: \(v.jsonText)") }
    }
    if let body = try? EventBody(decoding: bytes) {
        _ = try? RecordEvent(body)
        _ = try? SubjectEvent(body)
        _ = try? LibraryEvent(body)
        _ = try? PhotoEvent(body)
    }
}

/// Every field of every store, its parser and its validation, with the focus and time parsers.
func fuzzField(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    for store in StoreName.allCases {
        let schema = StoreSchema.schema(for: store)
        for f in schema.fields {
            if let v = try? schema.parse(field: f.name, text: text) {
                _ = try? schema.validate(fields: [f.name: v], focus: .newMom, at: TimeValue.parse(text), now: nil)
            }
        }
    }
    _ = FocusKey(text)
    _ = TimeValue.parse(text)
}
