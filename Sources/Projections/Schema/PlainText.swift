/// Text that people read: names and field values are shown on every
/// member's screen, so the characters that would act on a terminal instead
/// of being read are recognised here, once.
///
/// ```
/// PlainText.isControl("\u{1b}")                 // true: starts an escape sequence
/// PlainText.nameViolation("Li\u{1b}[31mly")     // "must not contain control characters (it has \u{1b})"
/// PlainText.nameViolation("Lily")               // nil
/// ```
public enum PlainText {
    /// The longest name, in characters.
    public static let maxNameLength = 100

    /// Whether `u` acts on a terminal rather than being read: a control
    /// character (C0, DEL, C1: newline, tab, ESC…), a line or paragraph
    /// separator, or a bidirectional embedding, override or isolate (which
    /// reorder the text after it).
    public static func isControl(_ u: Unicode.Scalar) -> Bool {
        switch u.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// `u` written as Swift writes it in a literal: `\n`, `\r`, `\t`, else `\u{1b}`.
    public static func escape(_ u: Unicode.Scalar) -> String {
        switch u {
        case "\n": #"\n"#
        case "\r": #"\r"#
        case "\t": #"\t"#
        default: #"\u{"# + String(u.value, radix: 16) + "}"
        }
    }

    /// Why `name` is not a name (a device's, a family's, a care subject's):
    /// it must be 1 to 100 characters of plain text, without control
    /// characters; `nil` when it is one.
    public static func nameViolation(_ name: String) -> String? {
        if name.isEmpty || name.count > maxNameLength { return "must be 1 to \(maxNameLength) characters" }
        if let c = name.unicodeScalars.first(where: isControl) { return "must not contain control characters (it has \(escape(c)))" }
        return nil
    }
}
