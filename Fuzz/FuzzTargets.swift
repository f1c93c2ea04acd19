// libFuzzer targets for famctl's parsers of untrusted bytes. Built by
// `make fuzz` into one binary per target (FAMCTL_FUZZ_TARGET selects it at
// build time through -D): envelope, segment, invite, json, field.
// Every input must be handled without a crash; what is found is kept as a
// regression test.

@_cdecl("LLVMFuzzerTestOneInput")
public func famctlFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    #if FUZZ_ENVELOPE
    if let env = try? SyncEnvelope(decoding: bytes) {
        _ = env.hasValidSignature
        _ = try? env.openBody(with: EpochKey(epoch: env.epoch, key: SecretBytes([UInt8](repeating: 1, count: 32))))
    }
    _ = try? EventBody(decoding: bytes)
    #elseif FUZZ_SEGMENT
    if let s = try? Segment(decoding: bytes) { _ = s.encoded() }
    _ = SharedFileName(String(decoding: bytes, as: UTF8.self))
    #elseif FUZZ_INVITE
    _ = try? InviteCode(parsing: String(decoding: bytes, as: UTF8.self))
    #elseif FUZZ_JSON
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
    #elseif FUZZ_FIELD
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
    #endif
    return 0
}
