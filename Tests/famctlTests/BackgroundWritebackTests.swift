import Foundation
@testable import famctl
import Testing

/// The thread that writes a rebuild's new file out while it is built.
struct BackgroundWritebackTests {
    @Test func writesTheFileOutUntilStopped() throws {
        let dir = NSTemporaryDirectory() + "famctl-writeback-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/file"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        let writeback = BackgroundWriteback(path: path)
        // Written while the thread runs, as a rebuild writes its file.
        for _ in 0..<64 { try handle.write(contentsOf: Data(repeating: 0x5A, count: 64 << 10)) }
        let deadline = Date().addingTimeInterval(30)
        while writeback.completedSyncs < 2, Date() < deadline { usleep(20_000) }
        #expect(writeback.completedSyncs >= 2, "the file was synced again and again while it was written")
        writeback.stop()
        let after = writeback.completedSyncs
        usleep(UInt32(3 * BackgroundWriteback.interval * 1_000_000))
        #expect(writeback.completedSyncs == after, "no sync after stop()")
        writeback.stop()
        try handle.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == 64 << 16)
    }

    @Test func aFileThatCannotBeOpenedIsLeftAlone() {
        let writeback = BackgroundWriteback(path: NSTemporaryDirectory() + "famctl-missing-" + UUID().uuidString + "/file")
        writeback.stop()
        writeback.stop()
        #expect(writeback.completedSyncs == 0)
    }
}
