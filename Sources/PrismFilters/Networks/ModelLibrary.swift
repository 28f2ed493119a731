import Foundation

/// The installed models: the folders Prism looks in for a model named without a path (the default face
/// detector and segmenter), and what `scripts/install-models` wrote there.
///
/// Folders, in order: `$PRISM_MODELS`, then `~/.local/share/prism/models`, then the checkout's `.models/`
/// (where `scripts/install-deps` puts the pinned defaults). Each may hold a `models.tsv` index naming each
/// file's source package, licence and checksum.
public enum ModelLibrary {
    /// One installed model, as the index describes it (only the file and its size when a folder has no index).
    public struct Entry: Sendable, Equatable {
        public var file: String
        public var path: String
        public var bytes: Int
        public var source: String?
        public var licence: String?
        public var description: String?
        /// The sha256 the index records for the file (the installer checked it when it wrote the file).
        public var sha256: String?
    }

    /// The folders searched, in order, whether or not they exist.
    public static var folders: [String] {
        var folders: [String] = []
        let environment = ProcessInfo.processInfo.environment
        if let chosen = environment["PRISM_MODELS"], !chosen.isEmpty { folders.append(chosen) }
        if let home = environment["HOME"], !home.isEmpty { folders.append(home + "/.local/share/prism/models") }
        folders.append(checkoutModels)
        return folders
    }

    /// The checkout's `.models/` (this file is Sources/PrismFilters/Networks/ModelLibrary.swift).
    static var checkoutModels: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".models").path
    }

    /// The path of the installed model `file` (`"centerface.onnx"`) in the first folder that has it.
    public static func find(_ file: String) -> String? {
        for folder in folders {
            let path = (folder as NSString).appendingPathComponent(file)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue { return path }
        }
        return nil
    }

    /// Every `.onnx` file in the folders (a name in an earlier folder hides the same name later), with what the
    /// folder's index says of it.
    public static func installed() -> [Entry] {
        var seen = Set<String>()
        var entries: [Entry] = []
        for folder in folders {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            let index = readIndex((folder as NSString).appendingPathComponent("models.tsv"))
            for name in names.sorted() where name.hasSuffix(".onnx") && !seen.contains(name) {
                let path = (folder as NSString).appendingPathComponent(name)
                let bytes = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
                let row = index[name]
                seen.insert(name)
                entries.append(Entry(file: name, path: path, bytes: bytes, source: row?["wheel"].map { wheel in
                    row?["source"].map { "\(wheel) (\($0))" } ?? wheel
                }, licence: row?["licence"], description: row?["description"], sha256: row?["sha256"]))
            }
        }
        return entries
    }

    /// `models.tsv`: a header line of column names, then one tab-separated row per file.
    static func readIndex(_ path: String) -> [String: [String: String]] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [:] }
        let lines = text.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        guard let header = lines.first else { return [:] }
        var rows: [String: [String: String]] = [:]
        for line in lines.dropFirst() where line.count == header.count {
            rows[line[0]] = Dictionary(uniqueKeysWithValues: zip(header, line))
        }
        return rows
    }
}
