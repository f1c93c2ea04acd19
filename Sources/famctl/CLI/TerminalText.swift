import Projections

/// What famctl prints for people: every line may hold text that another
/// device wrote (a name, a field), so its control characters are shown as
/// escapes (`\n`, `\u{1b}`) instead of acting on the terminal. JSON output
/// is left exact.
enum TerminalText {
    /// `line` with each control character (``PlainText/isControl(_:)``) escaped.
    ///
    /// ```
    /// TerminalText.escaped("title=a\nb\u{1b}[31m")   // #"title=a\nb\u{1b}[31m"#
    /// ```
    /// A name another device chose (a member's), as a column of a line
    /// shows it: in double quotes when it holds a space or a double quote
    /// (as a field's text is), so that a name cannot pass for more columns
    /// (`"Dad (this device)  fa2fe00487a1  owner"`).
    static func name(_ s: String) -> String { RecordView.valueText(.string(s)) }

    static func escaped(_ line: String) -> String {
        // Most lines are printable ASCII: nothing to look at scalar by scalar.
        if line.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return line }
        guard line.unicodeScalars.contains(where: PlainText.isControl) else { return line }
        var out = ""
        out.reserveCapacity(line.utf8.count + 16)
        for u in line.unicodeScalars {
            if PlainText.isControl(u) { out += PlainText.escape(u) } else { out.unicodeScalars.append(u) }
        }
        return out
    }
}
