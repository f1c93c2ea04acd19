import Foundation

/// A word as a POSIX shell reads it back: a hint's command, copied and
/// pasted, names what the user named (`'Grandma'\''s tablet'`).
enum ShellWord {
    /// `word` unchanged when the shell takes it as one plain word; else in
    /// single quotes, each single quote in it as `'\''`.
    static func quoted(_ word: String) -> String {
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy { s in
            (s.isASCII && (s.properties.isAlphabetic || ("0"..."9").contains(Character(s)))) || "-_./:@%+=,".unicodeScalars.contains(s) || (!s.isASCII && !s.properties.isWhitespace)
        }
        if plain { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
